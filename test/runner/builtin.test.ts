// The built-in cloud (CLOUD_AGENT=builtin): the service registers a cloud agent named `builtin`,
// keeps its token in DATA_DIR/builtin-agent.json and runs the reference agent as a child
// process; a cloud frame then runs on this machine, served by the agent's edge at its hostname.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { ensureBuiltinAgent, startBuiltinAgent } from '../../src/cloud/builtin.ts';
import { freePort } from '../../src/runner/processes.ts';
import { appProcesses, gitFixture, hitFrame, isEdgePage, killApps, until } from './fixture.ts';

let t: TestApp;
let tmp: string;
let builtin: { stop(): Promise<void> } | undefined;
let edgePort: number;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-builtin-'));
  edgePort = await freePort();
  t = await testApp({ env: { DATA_DIR: join(tmp, 'data'), EDGE_HTTP_PORT: String(edgePort) } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await builtin?.stop();
  if (tmp) killApps(tmp);
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the built-in cloud agent', () => {
  it('registers itself, runs cloud frames, and stops with the service', {
    timeout: 120_000,
  }, async () => {
    const repo = gitFixture(tmp);
    repo.pushApp('v1');
    process.env.GIT_BASE_URL = repo.gitBaseUrl; // what the service's environment would say
    // The test service's PUBLIC_URL is not this machine and anyone may sign up: `auto` would
    // refuse to run frames as local processes (src/cloud/strangers.ts). Chosen, it does.
    process.env.FRAME_RUNTIME = 'process';
    const port = (t.app.server.address() as { port: number }).port;
    builtin = await startBuiltinAgent({
      db: t.db,
      config: t.config,
      log: pino({ level: 'silent' }),
      url: `http://0.0.0.0:${port}`,
    });

    const file = join(t.config.dataDir, 'builtin-agent.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const row = await t.db
      .selectFrom('agents')
      .selectAll()
      .where('name', '=', 'builtin')
      .executeTakeFirstOrThrow();
    expect(row.kind).toBe('cloud');

    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space, {
      port: 8080, // the app's own port, inside its sandbox: nothing listens on it here
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    expect(frame).toMatchObject({ runtime: { kind: 'cloud' }, agent_id: row.id });
    const path = framePath(frame);
    const status = (want: string, test: (f: any) => boolean = () => true) =>
      until(
        `status ${want}`,
        async () => {
          const f = (await t.get(`${path}?wait_for=${want}&timeout=10`, { token: ann.token })).json;
          return f.status === want && test(f) ? f : undefined;
        },
        60_000,
      );

    // The agent told the service where its edge is: the frame has a URL there.
    const online = await status('Online', (f) => f.url !== null);
    expect(online.url).toBe(`http://${frame.hostname}:${edgePort}`);
    await until(
      'the app answers at its hostname',
      async () => {
        const r = await hitFrame(edgePort, frame.hostname);
        return 'body' in r && r.body.startsWith('hello v1');
      },
      30_000,
    );
    expect(appProcesses(tmp)).toHaveLength(1);

    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await status('Stopped', (f) => f.status_reason === null);
    await until('no app process', async () => appProcesses(tmp).length === 0, 30_000);
    const stopped = await hitFrame(edgePort, frame.hostname);
    expect(stopped).toMatchObject({ status: 503 });
    expect(isEdgePage(stopped, 'stopped')).toBe(true);

    await builtin.stop();
    builtin = undefined;
    expect(await hitFrame(edgePort, frame.hostname)).toEqual({ error: 'ECONNREFUSED' });

    // The saved token is reused; a lost file gives the same agent a new token.
    const again = await ensureBuiltinAgent({ db: t.db, config: t.config });
    expect(again.agent_id).toBe(row.id);
    rmSync(file);
    const renewed = await ensureBuiltinAgent({ db: t.db, config: t.config });
    expect(renewed.agent_id).toBe(row.id);
    expect(renewed.token).not.toBe(again.token);
    expect((await t.post('/v2/agent/sync', { token: again.token, body: {} })).status).toBe(401);
    expect((await t.post('/v2/agent/sync', { token: renewed.token, body: {} })).status).toBe(200);
    expect(
      await t.db.selectFrom('agents').select('id').where('name', '=', 'builtin').execute(),
    ).toHaveLength(1);
  });
});
