// How soon the edge serves a route change after the API call that made it (issue 35): the
// service as an operator runs it (the built-in cloud, the process runtime), one frame, and
// stop/start in turn. Measured from the API's answer to the first answer of the edge that
// shows the change: the 503 page for a stop, the app again for a start (which includes the
// app's own start). The edge is polled every 5 ms, on loopback.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, killAll, newTenantFrame, startInstance } from '../../test/faults/helpers/service.ts';
import { freePort } from '../../test/helpers/smtp.ts';
import { gitFixture, hit, killApps } from '../../test/runner/fixture.ts';

const POLL_MS = 5;

async function waitFor(edgePort: number, host: string, ok: (status: number) => boolean) {
  const started = performance.now();
  for (;;) {
    const r = await hit(edgePort, '/', host, 2000);
    if ('status' in r && ok(r.status)) return performance.now() - started;
    if (performance.now() - started > 60_000) throw new Error(`no change at ${host}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export async function routeChanges(samples: number) {
  const root = mkdtempSync(join(tmpdir(), 'frameplane-bench-routes-'));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`
  const edgePort = await freePort();
  try {
    const repo = gitFixture(root);
    repo.pushApp('v1');
    const service = await startInstance(
      'route-change',
      {
        DATA_DIR: join(root, 'data'),
        DATABASE_URL: '',
        CLOUD_AGENT: 'builtin',
        FRAME_RUNTIME: 'process',
        FRAMES_ON_EXIT: 'stop',
        GIT_BASE_URL: repo.gitBaseUrl,
        EDGE_HTTP_PORT: String(edgePort),
      },
      60_000,
    );
    const base = service.base;
    const { token, frame, path } = await newTenantFrame(base, 'bench@example.test');
    const host = frame.hostname as string;
    await waitFor(edgePort, host, (s) => s === 200);
    const stops: number[] = [];
    const starts: number[] = [];
    for (let i = 0; i < samples; i++) {
      await http(base, 'POST', `${path}/stop`, { token });
      stops.push(await waitFor(edgePort, host, (s) => s === 503));
      await http(base, 'POST', `${path}/start`, { token });
      starts.push(await waitFor(edgePort, host, (s) => s === 200));
    }
    await service.kill('SIGTERM');
    return { stops, starts };
  } finally {
    killAll();
    killApps(root);
    rmSync(root, { recursive: true, force: true });
  }
}
