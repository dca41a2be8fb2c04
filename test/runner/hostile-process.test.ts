// Issue 34 on the process runtime: a tenant's repository is hostile, and the agent (root here)
// must not be turned against its machine or its other tenants. The real service, a real agent
// as a child process, real git: links named as every file the agent reads or once wrote, a
// FIFO made by a running app and then linked from a commit, a package.json linked to /dev/zero.
// The victim file of the host is never written or read, and an honest frame beside them keeps
// being supervised throughout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { ATTACKS, hostileRepo, type Hostile } from '../isolation/hostile.ts';
import { freePort } from '../../src/runner/processes.ts';
import { gitFixture, hitFrame, killAndWait, killApps, until } from './fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));

let t: TestApp;
let tmp: string;
let hostile: Hostile;
let agent: ChildProcess | undefined;
let output: string[] = [];
let ann: TestUser;
let project: { id: string };
let space: string;
let agentId: string;
let agentToken: string;
let edgePort: number;
const context = () => `agent output (last lines):\n${output.join('\n')}`;

function startAgent(gitBaseUrl: string) {
  output = [];
  const server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  agent = spawn(
    process.execPath,
    [
      BIN,
      'agent',
      '--server',
      server,
      '--data',
      join(tmp, 'agent'),
      '--runtime',
      'process',
      '--edge-port',
      String(edgePort),
    ],
    {
      env: {
        ...process.env,
        FRAMEPLANE_AGENT_TOKEN: agentToken,
        GIT_BASE_URL: gitBaseUrl,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  for (const s of [agent.stdout, agent.stderr])
    s?.on('data', (d: Buffer) => {
      output = [...output, ...d.toString().split('\n').filter(Boolean)].slice(-60);
    });
}

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'fp-hostile-process-'));
  edgePort = await freePort();
  hostile = hostileRepo(tmp);
  gitFixture(tmp).pushApp('honest'); // acme/app, beside acme/hostile under the same base
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  const reg = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'host' },
  });
  agentId = reg.json.id;
  agentToken = reg.json.token;
  startAgent(hostile.gitBaseUrl);
});

afterAll(async () => {
  agent?.kill('SIGKILL');
  if (tmp) killApps(tmp);
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// Every frame on the same port: each app's own, inside its sandbox.
const frame = (name: string, repo: string, branch = 'main') =>
  newFrame(t, ann, project.id, space, {
    name,
    agent_id: agentId,
    git_repository: repo,
    git_repository_branch: branch,
    port: 8080,
  });

/** The frame once its latest deployment has ended (succeeded or failed). */
const settled = (f: { project_id: string; space_id: string; id: string }, timeoutMs = 90_000) =>
  until(
    `${f.id} deployed or failed`,
    async () => {
      const r = (await t.get(`${framePath(f)}?wait_for=Online&timeout=5`, { token: ann.token }))
        .json;
      const d = r.latest_deployment;
      // Error with a release that built is a crash: say all there is to say.
      if (r.status === 'Error' && d?.status !== 'failed')
        throw new Error(`${JSON.stringify(r, null, 1)}\n${context()}`);
      return d && d.status !== 'in_progress' && (d.status === 'failed' || r.status === 'Online')
        ? r
        : undefined;
    },
    timeoutMs,
    context,
  );

describe('the process runtime meets a hostile repository', () => {
  it('never writes or reads through a link, and refuses what it cannot read safely', {
    timeout: 300_000,
  }, async () => {
    const honest = await frame('honest', 'app');
    expect(await settled(honest)).toMatchObject({ status: 'Online' });
    const cases = [
      [ATTACKS.procfileLink, /Procfile is a symbolic link/],
      [ATTACKS.packageLink, /package\.json is a symbolic link/],
      [ATTACKS.markerLink, null], // the old marker's name means nothing now: it runs
    ] as const;
    for (const [branch, refused] of cases) {
      const f = await frame(branch, 'hostile', branch);
      const r = await settled(f);
      if (refused) {
        expect(r.latest_deployment, branch).toMatchObject({
          status: 'failed',
          failure_reason: 'build_failed',
          failure_message: expect.stringMatching(refused),
        });
      } else {
        expect(r.status, branch).toBe('Online');
      }
    }
    expect(hostile.victimHarm()).toEqual({ created: [], secretChanged: false });
    const answer = await hitFrame(edgePort, honest.hostname);
    expect(answer).toMatchObject({ status: 200, body: expect.stringMatching(/hello honest/) });
  });

  it('a FIFO the app made, linked from a commit or met after a restart, stalls no one', {
    timeout: 300_000,
  }, async () => {
    const maker = await frame('fifo-maker', 'hostile', ATTACKS.fifoMaker);
    expect(await settled(maker)).toMatchObject({ status: 'Online' });
    const cwd = await until('the app says where it runs', async () => {
      const r = await hitFrame(edgePort, maker.hostname, '/cwd');
      return 'body' in r && r.body.startsWith('/') ? r.body : undefined;
    });
    expect(statSync(join(cwd, 'Procfile')).isFIFO()).toBe(true);
    // A commit of another frame whose Procfile leads to that FIFO.
    hostile.pushLink('fifo-link', 'Procfile', join(cwd, 'Procfile'));
    const linked = await frame('fifo-link', 'hostile', 'fifo-link');
    expect((await settled(linked)).latest_deployment).toMatchObject({
      status: 'failed',
      failure_message: expect.stringMatching(/Procfile is a symbolic link/),
    });
    // The agent restarts: it adopts the maker without reading its tree, and works on.
    if (agent) await killAndWait(agent);
    startAgent(hostile.gitBaseUrl);
    const next = await frame('after-restart', 'app');
    expect((await settled(next)).status).toBe('Online');
    expect(await hitFrame(edgePort, maker.hostname)).toMatchObject({ status: 200 });
    const redeploy = await t.post(`${framePath(maker)}/deploy`, { token: ann.token });
    expect(redeploy.status, redeploy.text).toBe(202);
    const again = await settled(maker);
    expect(again).toMatchObject({ status: 'Online', latest_deployment: { id: redeploy.json.id } });
  });
});
