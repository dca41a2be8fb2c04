// A private image registry for the swarm tests: Debian's docker-registry (the CNCF
// distribution registry) on 127.0.0.1, storage in a temporary directory. Docker trusts registries
// on 127.0.0.0/8 over plain HTTP, so nothing else needs configuring.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/smtp.ts';

export async function startRegistry(): Promise<{
  address: string;
  catalog(): Promise<string[]>;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'frameplane-registry-'));
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log: {level: warn}',
      `storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}, delete: {enabled: true}}`,
      `http: {addr: "127.0.0.1:${port}"}`,
      '',
    ].join('\n'),
  );
  const child = spawn('docker-registry', ['serve', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => {
    err = (err + d).slice(-2000);
  });
  const address = `127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://${address}/v2/`)).status === 200) break;
    } catch {
      /* not yet */
    }
    if (i > 100 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`docker-registry did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address,
    catalog: async () =>
      ((await (await fetch(`http://${address}/v2/_catalog`)).json()) as { repositories: string[] })
        .repositories,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
