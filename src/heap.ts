// How far V8 lets the heap grow before its next full collection. By default it grows to up to
// about four times what the last one left: after the quick bench the service's live heap was
// 57 MB, yet it held 230 MB of garbage, and a process keeps the pages it grew to (321 MB
// resident). Most of what a request allocates dies young, so collecting the old generation at
// 40 % growth costs little; measured, the bench's resident memory was 201 MB and its rates
// within their run-to-run spread. Imported first by every entry that runs the service.
import v8 from 'node:v8';

v8.setFlagsFromString('--heap-growing-percent=40');
