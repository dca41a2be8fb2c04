// TLS from ACME on the built-in plane (the suite: acme-suite.ts).
import { acmeSuite } from './acme-suite.ts';

acmeSuite('builtin');
