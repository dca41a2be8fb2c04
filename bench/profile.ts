// BENCH_PROFILE=<dir>: a CPU profile of the service's process during each measurement, written as
// <dir>/<scenario>-<connections>.cpuprofile (open it in Chrome DevTools or speedscope). Taken
// inside the service's process (bench/service-process.ts), on the bench's request. With
// BENCH_PROFILE_KIND=allocations, a sampling profile of what was allocated instead, garbage
// included (<name>.heapprofile, DevTools' Memory tab): where the young generation's churn,
// and so the scavenges, come from. With BENCH_PROFILE_KIND=promoted, only what survived the
// young generation (and what was still live when the profile stopped, a young generation's
// worth at most): what is copied out of it, and fills the old generation for mark-compacts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';

let session: Session | undefined;
const kind = process.env.BENCH_PROFILE_KIND;
/** A heap sampling profile (.heapprofile) in place of a CPU profile. */
const heap = kind === 'allocations' || kind === 'promoted';

export async function startProfile() {
  session = new Session();
  session.connect();
  if (heap) {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 16_384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: kind === 'allocations',
    });
    return;
  }
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}

export async function stopProfile(dir: string, name: string) {
  if (!session) return;
  mkdirSync(dir, { recursive: true });
  if (heap) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify(profile));
  } else {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  }
  session.disconnect();
  session = undefined;
}
