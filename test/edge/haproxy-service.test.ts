// The HAProxy plane as an operator turns it on (EDGE_PLANE=haproxy): the service with its
// built-in cloud on the process runtime, two tenants' frames on the same port, each at its own
// hostname through haproxy, a stop that turns one into the stopped page while the other
// serves on, and a deploy, a rollback, a restart and a config release of two replicas under
// load that fail no request; a preview of a pushed branch at its own hostname, gone with its
// branch. All traffic goes to loopback.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
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
import { signature } from '../helpers/webhooks.ts';

let root: string;
let service: Instance;
let edgePort: number;
let repo: ReturnType<typeof gitFixture>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'frameplane-haproxy-service-'));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`
  repo = gitFixture(root);
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

async function frameOf(email: string, settings: Record<string, unknown> = {}) {
  const t = await newTenantFrame(service.base, email, settings);
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

it('fails no request while a frame of two replicas deploys, rolls back, restarts and takes new env under load', {
  timeout: 180_000,
}, async () => {
  const cat = await frameOf('cat@example.test', { replica_count: 2 });
  const context = () => service.log().slice(-3000);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const answers = new Map<string, number>();
  const failures: string[] = [];
  let going = true;
  const client = async () => {
    while (going) {
      const r = await hit(edgePort, '/', cat.host, 5000, agent);
      if ('error' in r || r.status !== 200) failures.push(JSON.stringify(r).slice(0, 300));
      else answers.set(r.body, (answers.get(r.body) ?? 0) + 1);
    }
  };
  const served = (v: string) =>
    [...answers].filter(([body]) => body.startsWith(`hello ${v}`)).reduce((n, [, c]) => n + c, 0);
  await until(
    `${cat.host} on v1`,
    async () => {
      const r = await hit(edgePort, '/', cat.host);
      return 'body' in r && r.body.startsWith('hello v1');
    },
    120_000,
    context,
  );
  const clients = Array.from({ length: 8 }, client);
  await until('load on v1', async () => served('v1') > 200, 30_000, context);
  // v1 is a release (to roll back to) once the agent has said both replicas are healthy.
  await until(
    'v1 succeeded',
    async () =>
      (await http(service.base, 'GET', cat.path, { token: cat.token })).json.latest_deployment
        ?.status === 'succeeded',
    60_000,
    context,
  );
  repo.pushApp('v2');
  const deploy = await http(service.base, 'POST', `${cat.path}/deploy`, {
    token: cat.token,
    body: {},
  });
  expect(deploy.status, deploy.text).toBe(202);
  /** `to` answers alone: `from` is drained and stopped, and `to` takes the load. */
  const switched = async (from: string, to: string) => {
    await until(`${to} serves`, async () => served(to) > 0, 120_000, context);
    await until(
      `${from} gone`,
      async () => {
        const before = served(from);
        // A fixed time on purpose: `from` is gone once half a second of load leaves it idle.
        await new Promise((r) => setTimeout(r, 500));
        return served(from) === before;
      },
      60_000,
      context,
    );
    const now = served(to);
    await until(`load on ${to}`, async () => served(to) > now + 200, 30_000, context);
  };
  await switched('v1', 'v2');

  // Back to v1's build (the process runtime's kept directory: nothing built), then a restart.
  const ops = { token: cat.token, body: {} };
  const list = await http(service.base, 'GET', `${cat.path}/deployments`, { token: cat.token });
  const first = list.json.data.at(-1);
  const back = await http(
    service.base,
    'POST',
    `${cat.path}/deployments/${first.id}/rollback`,
    ops,
  );
  expect(back.status, back.text).toBe(202);
  await switched('v2', 'v1');
  const logs = await http(service.base, 'GET', `${cat.path}/logs?limit=1000`, {
    token: cat.token,
  });
  const lines = logs.json.data.map((l: { line: string }) => l.line).join('\n');
  expect(lines).toContain(`deployment ${back.json.id}: the build of ${first.id}`);
  const restart = await http(service.base, 'POST', `${cat.path}/restart`, ops);
  expect(restart.status, restart.text).toBe(202);
  await until(
    'the restart done',
    async () => {
      const f = await http(service.base, 'GET', cat.path, { token: cat.token });
      const d = f.json.latest_deployment;
      return d?.id === restart.json.id && d.status === 'succeeded';
    },
    120_000,
    context,
  );
  const v1 = served('v1');
  await until('load after the restart', async () => served('v1') > v1 + 200, 30_000, context);

  // A config release: v1's build again with the new env, nothing built.
  const config = await http(service.base, 'PATCH', `${cat.path}/env?deploy=true`, {
    token: cat.token,
    body: { vars: { GREETING: 'cfg' } },
  });
  expect(config.status, config.text).toBe(200);
  const withCfg = () =>
    [...answers].filter(([body]) => body.endsWith(' cfg')).reduce((n, [, c]) => n + c, 0);
  await until('the config release serves', async () => withCfg() > 200, 120_000, context);
  const after = await http(service.base, 'GET', `${cat.path}/logs?tail=1000`, {
    token: cat.token,
  });
  const text = after.json.data.map((l: { line: string }) => l.line).join('\n');
  expect(text).toContain(`deployment ${config.json.deployment.id}: the build of ${first.id}`);
  going = false;
  await Promise.all(clients);
  agent.destroy();
  expect(failures).toEqual([]);
});

it('serves a preview of a pushed branch at its own hostname, until its branch is deleted', {
  timeout: 180_000,
}, async () => {
  const dan = await frameOf('dan@example.test');
  const context = () => service.log().slice(-3000);
  const answering = (host: string, text: string) => async () => {
    const r = await hit(edgePort, '/', host);
    return 'body' in r && r.body.startsWith(text);
  };
  // Whatever main holds by now (the test before pushed to it), not the branch's v9.
  await until(`${dan.host} answers`, answering(dan.host, 'hello v'), 120_000, context);
  const main = await hit(edgePort, '/', dan.host);
  const parentBody = 'body' in main ? main.body : '';
  const on = await http(service.base, 'PATCH', dan.path, {
    token: dan.token,
    body: { previews: { enabled: true, env: { GREETING: 'preview' } } },
  });
  expect(on.status, on.text).toBe(200);
  const projectId = dan.path.split('/')[3];
  const hook = await http(service.base, 'GET', `/v2/projects/${projectId}/webhook`, {
    token: dan.token,
  });
  const deliver = (payload: Record<string, unknown>) =>
    http(service.base, 'POST', `/v2/hooks/git?project=${projectId}`, {
      body: payload,
      headers: {
        'x-github-event': 'push',
        'x-hub-signature-256': signature(hook.json.secret, JSON.stringify(payload)),
      },
    });
  const repository = { name: 'app', owner: { login: 'acme' } };
  const sha = repo.pushApp('v9', false, 'feature');
  const made = await deliver({ ref: 'refs/heads/feature', after: sha, repository });
  expect(made.status, made.text).toBe(202);
  const previews = await http(service.base, 'GET', `${dan.path}/previews`, { token: dan.token });
  const preview = previews.json.data[0];
  expect(preview.hostname).not.toBe(dan.host);
  await until(
    `${preview.hostname} on v9`,
    answering(preview.hostname, 'hello v9 from 0 preview'),
    120_000,
    context,
  );
  expect(await answering(dan.host, parentBody)()).toBe(true);

  const gone = await deliver({ ref: 'refs/heads/feature', deleted: true, repository });
  expect(gone.json.previews).toMatchObject([{ frame_id: preview.id, action: 'deleted' }]);
  await until(
    `${preview.hostname} gone`,
    async () => isEdgePage(await hit(edgePort, '/', preview.hostname), 'unknown_host'),
    30_000,
    context,
  );
  expect(await answering(dan.host, parentBody)()).toBe(true);
});
