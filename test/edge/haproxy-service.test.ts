// The HAProxy plane as an operator turns it on (EDGE_PLANE=haproxy): the service with its
// built-in cloud on the process runtime, two tenants' frames on the same port, each at its own
// hostname through haproxy, and a stop that turns one into the stopped page while the other
// serves on. All traffic goes to loopback.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  http,
  killAll,
  newTenantFrame,
  startInstance,
  type Instance,
} from '../faults/helpers/service.ts';
import { freePort } from '../helpers/smtp.ts';
import { gitFixture, hit, isEdgePage, killApps, until } from '../runner/fixture.ts';

let root: string;
let service: Instance;
let edgePort: number;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'frameplane-haproxy-service-'));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`
  const repo = gitFixture(root);
  repo.pushApp('v1');
  edgePort = await freePort();
  service = await startInstance(
    'haproxy-plane',
    {
      DATA_DIR: join(root, 'data'),
      DATABASE_URL: '',
      CLOUD_AGENT: 'builtin',
      FRAME_RUNTIME: 'process',
      FRAMES_ON_EXIT: 'stop',
      GIT_BASE_URL: repo.gitBaseUrl,
      LOG_LEVEL: 'info',
      EDGE_HTTP_PORT: String(edgePort),
      EDGE_PLANE: 'haproxy',
    },
    60_000,
  );
}, 120_000);
afterAll(async () => {
  if (service) await service.kill('SIGTERM');
  killAll();
  if (root) {
    killApps(root);
    rmSync(root, { recursive: true, force: true });
  }
});

async function frameOf(email: string) {
  const t = await newTenantFrame(service.base, email);
  return { token: t.token, host: t.frame.hostname as string, path: t.path };
}

it('serves two frames on one port at their hostnames through haproxy; a stop shows at once', {
  timeout: 180_000,
}, async () => {
  const ann = await frameOf('ann@example.test');
  const bob = await frameOf('bob@example.test');
  const context = () => service.log().slice(-3000);
  for (const f of [ann, bob])
    await until(
      `${f.host} through haproxy`,
      async () => {
        const r = await hit(edgePort, '/', f.host);
        return 'body' in r && r.body.startsWith('hello v1');
      },
      120_000,
      context,
    );
  expect(service.log()).toMatch(/"edge":"http:\/\/127\.0\.0\.1:\d+"/);
  const stop = await http(service.base, 'POST', `${ann.path}/stop`, { token: ann.token });
  expect(stop.status, stop.text).toBe(202);
  await until(
    `${ann.host} stopped`,
    async () => isEdgePage(await hit(edgePort, '/', ann.host), 'stopped'),
    30_000,
    context,
  );
  const other = await hit(edgePort, '/', bob.host);
  expect(other, JSON.stringify(other)).toMatchObject({ status: 200 });
  expect(isEdgePage(await hit(edgePort, '/', `nobody.localhost`), 'unknown_host')).toBe(true);
});
