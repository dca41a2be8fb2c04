// What a containerised agent reports and how the frame shows it (CONTRACT 5 and 6): builds (the
// commit the agent resolved, a failed build), the deployment a replica runs, start time-outs and
// held ports; the release that serves; the health check path. Driven over HTTP as an agent does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame, replicaEvents, sync } from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp();
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
});
afterAll(async () => {
  await t.close();
});

type FrameRef = { id: string; project_id: string; space_id: string };

async function agentWithFrame(extra: Record<string, unknown> = {}) {
  const a = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'edge' },
  });
  expect(a.status, a.text).toBe(201);
  const f = await newFrame(t, ann, project.id, space, { agent_id: a.json.id, ...extra });
  return { agent: a.json as { id: string; token: string }, f: f as FrameRef & Record<string, any> };
}
const read = async (f: FrameRef) => {
  const r = await t.get(framePath(f), { token: ann.token });
  expect(r.status, r.text).toBe(200);
  return r.json;
};
const deploymentsOf = async (f: FrameRef) =>
  (await t.get(`${framePath(f)}/deployments`, { token: ann.token })).json.data as Array<
    Record<string, any>
  >;
const buildEvents = (f: FrameRef) =>
  t.db
    .selectFrom('frame_events')
    .select(['type', 'detail'])
    .where('frame_id', '=', f.id)
    .where('type', '=', 'build_failed')
    .execute();
/** Replica events of one deployment's release, as a containerised agent sends them. */
const of = (deploymentId: string, generation?: number, detail?: Record<string, unknown>) => ({
  deployment_id: deploymentId,
  ...(generation !== undefined ? { generation } : {}),
  ...(detail ? { detail } : {}),
});
const NPM = 'npm ERR! missing script: build';
const told = async (token: string, f: FrameRef) =>
  (await sync(t, token)).frames.find((x) => x.frame_id === f.id)!;

describe('a failed build', () => {
  it('on a first deploy: the deployment fails (build_failed, with its message), the frame is Error build_failed, no crash counted', async () => {
    const { agent, f } = await agentWithFrame();
    const first = await told(agent.token, f);
    expect(first).toMatchObject({ build_failed: false, health_check_path: '/', commit_sha: null });

    const answer = await sync(t, agent.token, {
      builds: [
        {
          deployment_id: first.deployment_id,
          state: 'failed',
          commit_sha: 'c0ffee1',
          message: NPM,
        },
      ],
      events: replicaEvents(f.id, 1, 'stopped', { deployment_id: first.deployment_id }),
    });
    // The agent hears at once that it must not build this deployment again.
    expect(answer.frames.find((x) => x.frame_id === f.id)).toMatchObject({
      build_failed: true,
      commit_sha: 'c0ffee1',
    });

    const now = await read(f);
    expect(now).toMatchObject({
      status: 'Error',
      status_reason: 'build_failed',
      serving: null,
      backoff: { crash_streak: 0 },
      latest_deployment: {
        id: first.deployment_id,
        status: 'failed',
        commit_sha: 'c0ffee1',
        failure_reason: 'build_failed',
        failure_message: NPM,
      },
    });
    const d = at(await deploymentsOf(f), 0);
    expect(d).toMatchObject({
      status: 'failed',
      failure_reason: 'build_failed',
      failure_message: NPM,
    });
    expect(d.finished_at).toMatch(/Z$/);
    const detail = { deployment_id: first.deployment_id, commit_sha: 'c0ffee1', message: NPM };
    expect(await buildEvents(f)).toEqual([{ type: 'build_failed', detail }]);

    // Reported again (the agent did not hear back): nothing more happens.
    await sync(t, agent.token, {
      builds: [{ deployment_id: first.deployment_id, state: 'failed', message: 'again' }],
    });
    expect(at(await deploymentsOf(f), 0).failure_message).toBe(NPM);
    expect(await buildEvents(f)).toHaveLength(1);

    // A new deployment clears it.
    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    expect(deploy.json).toMatchObject({ failure_reason: null, failure_message: null });
    expect(await told(agent.token, f)).toMatchObject({
      build_failed: false,
      deployment_id: deploy.json.id,
    });
    expect((await read(f)).status).toBe('Starting');
  });

  it('during a rollout: the old release keeps serving (Online), the latest deployment shows the failure', async () => {
    const { agent, f } = await agentWithFrame({ replica_count: 2 });
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 2, 'healthy', of(v1.deployment_id, v1.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Online',
      serving: { deployment_id: v1.deployment_id },
      latest_deployment: { status: 'succeeded' },
    });

    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    const v2 = await told(agent.token, f);
    expect(v2.deployment_id).toBe(deploy.json.id);
    // The serving replicas, re-reported under the new generation with their own deployment id,
    // never complete the new deployment.
    await sync(t, agent.token, {
      builds: [{ deployment_id: v2.deployment_id, state: 'building', commit_sha: 'abc1234def' }],
      events: replicaEvents(f.id, 2, 'healthy', of(v1.deployment_id, v2.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      serving: { deployment_id: v1.deployment_id },
      latest_deployment: { id: v2.deployment_id, status: 'in_progress', commit_sha: 'abc1234def' },
    });

    await sync(t, agent.token, {
      builds: [{ deployment_id: v2.deployment_id, state: 'failed', message: 'tsc: 3 errors' }],
    });
    const now = await read(f);
    expect(now).toMatchObject({
      status: 'Online',
      status_reason: null,
      serving: { deployment_id: v1.deployment_id, commit_sha: null },
      backoff: { crash_streak: 0 },
      latest_deployment: {
        id: v2.deployment_id,
        status: 'failed',
        failure_reason: 'build_failed',
        failure_message: 'tsc: 3 errors',
      },
    });
    expect(await told(agent.token, f)).toMatchObject({
      build_failed: true,
      deployment_id: v2.deployment_id,
    });
  });

  it('healthy reports of the new deployment complete it, and it then serves', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'healthy', { deployment_id: v1.deployment_id }),
    });
    await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    const v2 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'healthy', of(v1.deployment_id, v2.generation)),
    });
    expect((await read(f)).latest_deployment.status).toBe('in_progress');
    await sync(t, agent.token, {
      builds: [{ deployment_id: v2.deployment_id, state: 'succeeded', commit_sha: 'feedbeef' }],
      events: replicaEvents(f.id, 1, 'healthy', of(v2.deployment_id, v2.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Online',
      serving: { deployment_id: v2.deployment_id, commit_sha: 'feedbeef' },
      latest_deployment: { status: 'succeeded', commit_sha: 'feedbeef', failure_reason: null },
    });
  });
});

describe('the commit a build reports', () => {
  it('fills a deployment made from a branch, never replaces a pushed one, and must look like a SHA', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    const sha = '0123456789abcdef0123456789abcdef01234567';
    await sync(t, agent.token, {
      builds: [{ deployment_id: v1.deployment_id, state: 'building', commit_sha: sha }],
    });
    expect(at(await deploymentsOf(f), 0).commit_sha).toBe(sha);
    await sync(t, agent.token, {
      builds: [{ deployment_id: v1.deployment_id, state: 'succeeded', commit_sha: 'fffffff' }],
    });
    expect(at(await deploymentsOf(f), 0).commit_sha).toBe(sha);

    const report = (build: Record<string, unknown>) =>
      t.post('/v2/agent/sync', {
        token: agent.token,
        body: { builds: [{ deployment_id: v1.deployment_id, ...build }] },
      });
    for (const bad of ['XYZ1234', 'abc', 'a'.repeat(65)])
      expectProblem(await report({ state: 'building', commit_sha: bad }), 422);
    expectProblem(await report({ state: 'done' }), 422);
    expectProblem(await report({ state: 'failed', message: 'x'.repeat(2001) }), 422);
  });

  it('is ignored for a deployment of a frame on another agent', async () => {
    const mine = await agentWithFrame();
    const other = await agentWithFrame();
    const theirs = await told(other.agent.token, other.f);
    await sync(t, mine.agent.token, {
      builds: [
        {
          deployment_id: theirs.deployment_id,
          state: 'failed',
          commit_sha: 'deadbeef',
          message: 'not yours',
        },
      ],
    });
    expect((await deploymentsOf(other.f))[0]).toMatchObject({
      status: 'in_progress',
      commit_sha: null,
      failure_reason: null,
    });
    await sync(t, mine.agent.token, {
      builds: [{ deployment_id: 'dep_nosuchthing', state: 'failed' }],
    });
  });
});

describe('replicas that never become healthy', () => {
  it('no health check answer within the start timeout: the deployment fails, the frame is Error health_check_failed', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'starting', { deployment_id: v1.deployment_id }),
    });
    expect((await read(f)).status).toBe('Starting');
    await sync(t, agent.token, {
      events: replicaEvents(
        f.id,
        1,
        'unhealthy',
        of(v1.deployment_id, undefined, { reason: 'start_timeout' }),
      ),
    });
    expect(await read(f)).toMatchObject({
      status: 'Error',
      status_reason: 'health_check_failed',
      backoff: { crash_streak: 0 },
      latest_deployment: { status: 'failed', failure_reason: 'health_check_failed' },
      replicas: [{ state: 'unhealthy' }],
    });
  });

  it('a port another process holds: the deployment fails, the frame is Error port_in_use', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(
        f.id,
        1,
        'unhealthy',
        of(v1.deployment_id, undefined, { reason: 'port_in_use', message: 'bind: address in use' }),
      ),
    });
    expect(await read(f)).toMatchObject({
      status: 'Error',
      status_reason: 'port_in_use',
      latest_deployment: {
        status: 'failed',
        failure_reason: 'port_in_use',
        failure_message: 'bind: address in use',
      },
    });
  });

  it('an unhealthy report without a reason does not fail the deployment (the agent may still wait)', async () => {
    const { agent, f } = await agentWithFrame();
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'unhealthy') });
    expect((await read(f)).latest_deployment.status).toBe('in_progress');
  });

  it('a crash fails the deployment with crash, a failed pull with image_pull_failed', async () => {
    const a = await agentWithFrame();
    await sync(t, a.agent.token, { events: replicaEvents(a.f.id, 1, 'crashed') });
    expect(await read(a.f)).toMatchObject({
      status: 'Error',
      status_reason: 'crash',
      latest_deployment: { failure_reason: 'crash' },
    });
    const b = await agentWithFrame();
    await sync(t, b.agent.token, {
      events: replicaEvents(b.f.id, 1, 'crashed', { detail: { reason: 'image_pull_failed' } }),
    });
    expect(await read(b.f)).toMatchObject({
      status: 'Error',
      status_reason: 'image_pull_failed',
      latest_deployment: { failure_reason: 'image_pull_failed' },
    });
  });

  it('crashes of the old release in a rollout count toward the back-off, whose trip fails the new deployment (backoff_tripped)', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'healthy', { deployment_id: v1.deployment_id }),
    });
    await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    const v2 = await told(agent.token, f);
    for (let i = 0; i < 4; i++) {
      await sync(t, agent.token, {
        events: replicaEvents(f.id, 1, 'crashed', of(v1.deployment_id, v2.generation)),
      });
    }
    expect(await read(f)).toMatchObject({
      backoff: { crash_streak: 4 },
      latest_deployment: { status: 'in_progress' },
    });
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'crashed', of(v1.deployment_id, v2.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      latest_deployment: { status: 'failed', failure_reason: 'backoff_tripped' },
    });
  });
});

describe('a new release that fails while an earlier one serves (CONTRACT 5)', () => {
  const replicaEventsOf = (f: FrameRef) =>
    t.db
      .selectFrom('frame_events')
      .select(['type', 'detail'])
      .where('frame_id', '=', f.id)
      .where('type', 'in', ['replica', 'backoff_tripped'])
      .orderBy('id')
      .execute();
  /** A frame whose v1 serves (Online), and a deploy of v2 the agent has heard of. */
  async function servingThenDeploy(replicaCount = 1) {
    const { agent, f } = await agentWithFrame({ replica_count: replicaCount });
    const v1 = await told(agent.token, f);
    await sync(t, agent.token, {
      events: replicaEvents(f.id, replicaCount, 'healthy', of(v1.deployment_id, v1.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Online',
      latest_deployment: { status: 'succeeded' },
    });
    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    const v2 = await told(agent.token, f);
    expect(v2.deployment_id).toBe(deploy.json.id);
    return { agent, f, v1, v2 };
  }

  it('v2 crashing at boot six times in a row: v2 fails (crash), v1 stays Online', async () => {
    const { agent, f, v1, v2 } = await servingThenDeploy();
    // What an agent that restarts the new release sends: it starts, then crashes, over and over.
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'starting', of(v2.deployment_id, v2.generation)),
    });
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      replicas: [{ state: 'healthy', generation: v1.generation }],
    });
    const exited = { exit_code: 1, message: 'replica 0 exited (exit code 1)' };
    for (let i = 0; i < 6; i++) {
      const answer = await sync(t, agent.token, {
        events: replicaEvents(f.id, 1, 'crashed', of(v2.deployment_id, v2.generation, exited)),
      });
      expect(answer.frames.find((x) => x.frame_id === f.id)?.desired_state).toBe('running');
    }
    const now = await read(f);
    expect(now).toMatchObject({
      status: 'Online',
      status_reason: null,
      desired_state: 'running',
      serving: { deployment_id: v1.deployment_id },
      backoff: { crash_streak: 0, tripped_at: null },
      replicas: [{ state: 'healthy', generation: v2.generation }],
      latest_deployment: {
        id: v2.deployment_id,
        status: 'failed',
        failure_reason: 'crash',
        failure_message: 'replica 0 exited (exit code 1)',
      },
    });
    expect(at(await deploymentsOf(f), 1)).toMatchObject({
      id: v1.deployment_id,
      status: 'succeeded',
    });
    // Each crash is history; none tripped anything.
    const events = await replicaEventsOf(f);
    expect(events.map((e) => e.type)).toEqual(Array(6).fill('replica'));
    expect(at(events, 0).detail).toMatchObject({
      state: 'crashed',
      deployment_id: v2.deployment_id,
      exit_code: 1,
    });
    // The serving release still reports as before, under the new generation.
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'healthy', of(v1.deployment_id, v2.generation)),
    });
    expect(await read(f)).toMatchObject({ status: 'Online', backoff: { crash_streak: 0 } });
  });

  it('v2 out of memory or never healthy fails with that reason; v1 stays Online', async () => {
    const a = await servingThenDeploy(2);
    await sync(t, a.agent.token, {
      events: [
        {
          frame_id: a.f.id,
          replica: 0,
          type: 'starting',
          ...of(a.v2.deployment_id, a.v2.generation),
        },
        { frame_id: a.f.id, replica: 1, type: 'oom', ...of(a.v2.deployment_id, a.v2.generation) },
      ],
    });
    expect(await read(a.f)).toMatchObject({
      status: 'Online',
      replicas: [{ state: 'healthy' }, { state: 'healthy' }],
      latest_deployment: { status: 'failed', failure_reason: 'oom' },
      backoff: { crash_streak: 0 },
    });

    const b = await servingThenDeploy();
    const timeout = {
      reason: 'start_timeout',
      message: 'replica 0 does not answer on its port after 60 s',
    };
    await sync(t, b.agent.token, {
      events: replicaEvents(
        b.f.id,
        1,
        'unhealthy',
        of(b.v2.deployment_id, b.v2.generation, timeout),
      ),
    });
    expect(await read(b.f)).toMatchObject({
      status: 'Online',
      status_reason: null,
      latest_deployment: {
        status: 'failed',
        failure_reason: 'health_check_failed',
        failure_message: timeout.message,
      },
    });
  });

  it("with nothing serving, the new release's crashes count and trip the back-off", async () => {
    const { agent, f, v1, v2 } = await servingThenDeploy();
    // v1 no longer serves: it crashed.
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'crashed', of(v1.deployment_id, v2.generation)),
    });
    for (let i = 0; i < 4; i++) {
      await sync(t, agent.token, {
        events: replicaEvents(f.id, 1, 'crashed', of(v2.deployment_id, v2.generation)),
      });
    }
    expect(await read(f)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      desired_state: 'stopped',
      backoff: { crash_streak: 5 },
    });
    expect((await replicaEventsOf(f)).filter((e) => e.type === 'backoff_tripped')).toHaveLength(1);
  });

  it('on a first deploy, crashes of the named release trip the back-off', async () => {
    const { agent, f } = await agentWithFrame();
    const v1 = await told(agent.token, f);
    for (let i = 0; i < 5; i++) {
      await sync(t, agent.token, {
        events: replicaEvents(f.id, 1, 'crashed', of(v1.deployment_id, v1.generation)),
      });
    }
    expect(await read(f)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      latest_deployment: { status: 'failed', failure_reason: 'crash' },
    });
  });
});

describe('health_check_path', () => {
  it('defaults to "/", is taken on create and PATCH, and reaches the agent with a new generation', async () => {
    const { agent, f } = await agentWithFrame({ health_check_path: '/healthz' });
    expect(f.health_check_path).toBe('/healthz');
    const before = await told(agent.token, f);
    expect(before.health_check_path).toBe('/healthz');

    // An agent waiting in a long poll hears of the change at once.
    const waiting = t.post('/v2/agent/sync?wait=20', { token: agent.token, body: {} });
    await t.untilHolding('frameplane_agent', agent.id, 'the long poll');
    const started = Date.now();
    const r = await t.patch(framePath(f), {
      token: ann.token,
      body: { health_check_path: '/ready?full=1' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      health_check_path: '/ready?full=1',
      generation: before.generation + 1,
    });
    const answer = await waiting;
    // Half the wait: woken by the change, not by the timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(answer.json.frames.find((x: any) => x.frame_id === f.id)).toMatchObject({
      health_check_path: '/ready?full=1',
      generation: before.generation + 1,
    });
    // No new deployment: the replicas need not restart for it.
    expect(await deploymentsOf(f)).toHaveLength(1);
    expect((await newFrame(t, ann, project.id, space, { name: 'plain' })).health_check_path).toBe(
      '/',
    );
  });

  const BAD = [
    'healthz',
    '',
    '/with space',
    '/tab\there',
    '/nl\n',
    '/nul\u0000',
    `/${'a'.repeat(200)}`,
    'http://x/',
  ];
  it.each(BAD.map((p) => [JSON.stringify(p), p]))(
    '%s is refused with 422 on create and on PATCH',
    async (_label, path) => {
      const create = await t.post(`/v2/projects/${project.id}/spaces/${space}/frames`, {
        token: ann.token,
        body: {
          name: 'h',
          owner_id: ann.id,
          git_repository: 'app',
          git_repository_owner: 'acme',
          git_repository_branch: 'main',
          port: 8080,
          health_check_path: path,
        },
      });
      expectProblem(create, 422);
      expect(create.json.errors.map((e: any) => e.path)).toContain('health_check_path');
      const f = await newFrame(t, ann, project.id, space, { name: 'hc' });
      const update = await t.patch(framePath(f), {
        token: ann.token,
        body: { health_check_path: path },
      });
      expectProblem(update, 422);
      expect(update.json.errors.map((e: any) => e.path)).toContain('health_check_path');
      expect((await read(f)).health_check_path).toBe('/');
    },
  );

  it('says what to send', async () => {
    const f = await newFrame(t, ann, project.id, space, { name: 'hc-message' });
    const r = await t.patch(framePath(f), {
      token: ann.token,
      body: { health_check_path: 'healthz' },
    });
    expectProblem(r, 422, 'invalid_health_check_path');
    expect(r.json.detail).toMatch(/start with "\/"/);
    expect(r.json.detail).toContain('/healthz');
    expect(
      (
        await t.patch(framePath(f), {
          token: ann.token,
          body: { health_check_path: `/${'a'.repeat(199)}` },
        })
      ).status,
    ).toBe(200);
  });
});
