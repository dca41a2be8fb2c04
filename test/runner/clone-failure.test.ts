// Issue 38: a frame whose source cannot be cloned says so. The real service on a real port, the
// reference agent (in this process, on the process runtime) and a real bare git repository: a
// frame of a repository that does not exist and one of a branch that does not exist each end
// Error with clone_failed (not image_pull_failed), and the deployment, the replica's event and
// the frame's log say which repository and branch, with git's own error line and no path of
// the agent's host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { startAgent, type RunningAgent } from '../../src/runner/agent.ts';
import { gitFixture, until } from './fixture.ts';

let t: TestApp;
let tmp: string;
let agent: RunningAgent | undefined;
let ann: TestUser;
let project: { id: string };
let space: string;
let agentId: string;
/** The agent's own log lines, shown if a frame never fails as it should. */
const agentSaid: string[] = [];

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-clone-failure-'));
  const repo = gitFixture(tmp);
  repo.pushApp('v1');
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  const reg = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'laptop' },
  });
  expect(reg.status, reg.text).toBe(201);
  agentId = reg.json.id;
  agent = await startAgent({
    server: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`,
    token: reg.json.token,
    dataDir: join(tmp, 'agent'),
    gitBaseUrl: repo.gitBaseUrl,
    log: pino({ level: 'debug' }, { write: (l: string) => void agentSaid.push(l.trim()) }),
    runtime: 'process',
  });
});

afterAll(async () => {
  await agent?.stop();
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A frame of that repository and branch, once it has failed: its view, events and logs. */
async function failedFrame(name: string, repository: string, branch: string) {
  const frame = await newFrame(t, ann, project.id, space, {
    name,
    agent_id: agentId,
    git_repository: repository,
    git_repository_branch: branch,
  });
  const path = framePath(frame);
  let last: unknown;
  const seen = await until(
    `${name} in Error`,
    async () => {
      const f = (await t.get(`${path}?wait_for=Error&timeout=10`, { token: ann.token })).json;
      last = f;
      return f.status === 'Error' ? f : undefined;
    },
    100_000,
    () => JSON.stringify({ last, agent: agentSaid.slice(-40) }),
  );
  const events = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data;
  const logs = (await t.get(`${path}/logs?limit=200`, { token: ann.token })).json.data;
  return { seen, events, logs: logs.map((l: { line: string }) => l.line) as string[] };
}

describe('a frame whose source cannot be cloned', () => {
  it('of a repository that does not exist: Error, clone_failed, naming it', {
    timeout: 120_000,
  }, async () => {
    const { seen, events, logs } = await failedFrame('missing-repo', 'missing', 'main');
    const message =
      "could not clone acme/missing (branch main): fatal: 'acme/missing' does not appear to be " +
      'a git repository';
    expect(seen).toMatchObject({
      status_reason: 'clone_failed',
      latest_deployment: { status: 'failed', failure_reason: 'clone_failed' },
    });
    expect(seen.latest_deployment.failure_message).toBe(message);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'replica',
        detail: expect.objectContaining({ state: 'crashed', reason: 'clone_failed', message }),
      }),
    );
    expect(logs).toContain(`[frameplane] fetch failed: ${message}`);
    expect(JSON.stringify({ seen, events, logs })).not.toContain(tmp);
  });

  it('of a branch that does not exist: Error, clone_failed, naming the branch', {
    timeout: 120_000,
  }, async () => {
    const { seen, logs } = await failedFrame('missing-branch', 'app', 'no-such-branch');
    const message =
      'could not clone acme/app (branch no-such-branch): ' +
      'fatal: Remote branch no-such-branch not found in upstream origin';
    expect(seen).toMatchObject({
      status_reason: 'clone_failed',
      latest_deployment: {
        status: 'failed',
        failure_reason: 'clone_failed',
        failure_message: message,
      },
    });
    expect(logs).toContain(`[frameplane] fetch failed: ${message}`);
    expect(JSON.stringify({ seen, logs })).not.toContain(tmp);
  });
});
