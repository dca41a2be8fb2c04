// BENCH_PROFILE=<dir>: a CPU profile of the service's process during each measurement, written as
// <dir>/<scenario>-<connections>.cpuprofile (open it in Chrome DevTools or speedscope). Taken
// inside the service's process (bench/service-process.ts), on the bench's request.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';

let session: Session | undefined;

export async function startProfile() {
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}

export async function stopProfile(dir: string, name: string) {
  if (!session) return;
  const { profile } = await session.post('Profiler.stop');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  session.disconnect();
  session = undefined;
}
