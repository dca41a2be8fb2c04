import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser } from '../helpers/factories.ts';
import {
  ADMIN,
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  sync,
} from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('frame lifecycle on a cloud agent', () => {
  it('goes Starting -> Online, stops and starts through the agent, trips back-off and recovers on deploy', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const agent = await cloudAgent(t);
    const frame = await newFrame(t, ann, project.id, space, { replica_count: 2 });
    expect(frame).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      runtime: { kind: 'cloud' },
      agent_id: agent.id,
      replica_count: 2,
    });
    const path = framePath(frame);

    let state = await sync(t, agent.token);
    expect(state.frames).toHaveLength(1);
    expect(state.frames[0]).toMatchObject({
      frame_id: frame.id,
      desired_state: 'running',
      replica_count: 2,
      port: 8080,
      git_repository: 'app',
      env: {},
    });

    await sync(t, agent.token, { events: replicaEvents(frame.id, 2, 'pulling') });
    expect((await t.get(path, { token: ann.token })).json.status).toBe('Starting');
    await sync(t, agent.token, {
      events: [
        ...replicaEvents(frame.id, 2, 'starting'),
        { frame_id: frame.id, replica: 0, type: 'healthy' },
      ],
    });
    expect((await t.get(path, { token: ann.token })).json.status).toBe('Starting'); // deploy still in progress
    await sync(t, agent.token, { events: [{ frame_id: frame.id, replica: 1, type: 'healthy' }] });
    let read = await t.get(path, { token: ann.token });
    expect(read.json).toMatchObject({
      status: 'Online',
      status_reason: null,
      latest_deployment: { trigger: 'create', status: 'succeeded' },
    });
    expect(read.headers.etag).toBeTruthy();

    await sync(t, agent.token, { events: [{ frame_id: frame.id, replica: 1, type: 'unhealthy' }] });
    expect((await t.get(path, { token: ann.token })).json).toMatchObject({
      status: 'Degraded',
      status_reason: 'health_check_failed',
    });
    await sync(t, agent.token, { events: [{ frame_id: frame.id, replica: 0, type: 'oom' }] });
    expect((await t.get(path, { token: ann.token })).json).toMatchObject({
      status: 'Error',
      status_reason: 'oom',
    });
    await sync(t, agent.token, { events: replicaEvents(frame.id, 2, 'healthy') });

    const stop = await t.post(`${path}/stop`, { token: ann.token });
    expect(stop.status).toBe(202);
    expect(stop.headers.location).toBe(path);
    expect(stop.json).toMatchObject({
      status: 'Stopped',
      status_reason: 'stopping',
      desired_state: 'stopped',
    });
    state = await sync(t, agent.token);
    expect(at(state.frames, 0).desired_state).toBe('stopped');
    await sync(t, agent.token, { events: replicaEvents(frame.id, 2, 'stopped') });
    expect((await t.get(path, { token: ann.token })).json).toMatchObject({
      status: 'Stopped',
      status_reason: null,
    });

    const start = await t.post(`${path}/start`, { token: ann.token });
    expect(start.status).toBe(202);
    expect(start.json.desired_state).toBe('running');
    await sync(t, agent.token, { events: replicaEvents(frame.id, 2, 'starting') });
    expect((await t.get(path, { token: ann.token })).json.status).toBe('Starting');

    // Five crashes in a row trip the breaker.
    for (let i = 0; i < 5; i++)
      await sync(t, agent.token, { events: [{ frame_id: frame.id, replica: 0, type: 'crashed' }] });
    read = await t.get(path, { token: ann.token });
    expect(read.json).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      desired_state: 'stopped',
    });
    expect(read.json.backoff).toMatchObject({
      crash_streak: 5,
      threshold: 5,
      clears_on: expect.arrayContaining(['push', 'deploy']),
    });
    expect(read.json.backoff.tripped_at).toBeTruthy();
    expect(at((await sync(t, agent.token)).frames, 0).desired_state).toBe('stopped');

    const deploy = await t.post(`${path}/deploy`, { token: ann.token });
    expect(deploy.status).toBe(202);
    expect(deploy.json).toMatchObject({ trigger: 'manual', status: 'in_progress' });
    read = await t.get(path, { token: ann.token });
    expect(read.json).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      backoff: { crash_streak: 0, tripped_at: null },
    });
    state = await sync(t, agent.token);
    expect(state.frames[0]).toMatchObject({
      desired_state: 'running',
      deployment_id: deploy.json.id,
    });
    // Reports of the previous rollout no longer count.
    await sync(t, agent.token, {
      events: [{ frame_id: frame.id, replica: 0, type: 'crashed', generation: 1 }],
    });
    expect((await t.get(path, { token: ann.token })).json.backoff.crash_streak).toBe(0);
    await sync(t, agent.token, {
      events: replicaEvents(frame.id, 2, 'healthy', { generation: at(state.frames, 0).generation }),
    });
    expect((await t.get(path, { token: ann.token })).json.status).toBe('Online');

    const history = await t.get(`${path}/deployments`, { token: ann.token });
    expect(history.json.data.map((d: any) => d.trigger)).toEqual(['manual', 'create']);
    const events = await t.db
      .selectFrom('frame_events')
      .select(['type', 'status', 'status_reason'])
      .where('frame_id', '=', frame.id)
      .orderBy('id')
      .execute();
    expect(events.filter((e) => e.type === 'status').map((e) => e.status)).toContain('Error');
  });

  it('a stuck image pull trips the back-off after three minutes of service time', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const agent = await cloudAgent(t, 'cloud-pull');
    const frame = await newFrame(t, ann, project.id, space);
    const path = framePath(frame);
    // place it on this agent if the least-loaded choice went elsewhere
    await t.db
      .updateTable('frames')
      .set({ agent_id: agent.id })
      .where('id', '=', frame.id)
      .execute();
    await sync(t, agent.token, { events: [{ frame_id: frame.id, replica: 0, type: 'pulling' }] });
    await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 170 } });
    expect((await t.get(path, { token: ann.token })).json.status).toBe('Starting');
    await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 20 } });
    const read = await t.get(path, { token: ann.token });
    expect(read.json).toMatchObject({ status: 'Stopped', status_reason: 'backoff_tripped' });
  });

  it('billing past due suspends, scales to zero on the agent, refuses start and deploy (402), and restores', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const agent = await cloudAgent(t, 'cloud-billing');
    const running = await newFrame(t, ann, project.id, space, { name: 'a' });
    const stopped = await newFrame(t, ann, project.id, space, { name: 'b' });
    for (const f of [running, stopped])
      await t.db.updateTable('frames').set({ agent_id: agent.id }).where('id', '=', f.id).execute();
    await t.post(`${framePath(stopped)}/stop`, { token: ann.token });

    const bill = await t.put(`/v2/admin/users/${ann.id}/billing`, {
      token: ADMIN,
      body: { status: 'past_due' },
    });
    expect(bill.status, bill.text).toBe(200);
    for (const f of [running, stopped])
      expect((await t.get(framePath(f), { token: ann.token })).json.status).toBe('Suspended');
    expect((await sync(t, agent.token)).frames.every((f) => f.desired_state === 'stopped')).toBe(
      true,
    );
    expectProblem(
      await t.post(`${framePath(running)}/start`, { token: ann.token }),
      402,
      'billing_past_due',
    );
    expectProblem(
      await t.post(`${framePath(running)}/deploy`, { token: ann.token }),
      402,
      'billing_past_due',
    );

    await t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status: 'active' } });
    expect((await t.get(framePath(running), { token: ann.token })).json.status).toBe('Starting');
    expect((await t.get(framePath(stopped), { token: ann.token })).json.status).toBe('Stopped');
    const desired = Object.fromEntries(
      (await sync(t, agent.token)).frames.map((f) => [f.frame_id, f.desired_state]),
    );
    expect(desired).toMatchObject({ [running.id]: 'running', [stopped.id]: 'stopped' });
  });

  it('records frame operations in the project audit log (admin only)', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space);
    await t.post(`${framePath(frame)}/stop`, { token: ann.token });
    await t.patch(framePath(frame), { token: ann.token, body: { replica_count: 3 } });
    await t.post(`${framePath(frame)}/deploy`, { token: ann.token });
    const audit = await t.get(`/v2/projects/${project.id}/audit`, { token: ann.token });
    expect(audit.status).toBe(200);
    expect(audit.json.data.map((e: any) => e.action)).toEqual([
      'frame.deployed',
      'frame.updated',
      'frame.stop',
      'frame.created',
      'project.created',
    ]);
    expect(audit.json.data[2]).toMatchObject({
      actor_id: ann.id,
      target_id: frame.id,
      before: { desired_state: 'running' },
      after: { desired_state: 'stopped' },
    });
    const stranger = await newUser(t, 'stranger');
    expectProblem(await t.get(`/v2/projects/${project.id}/audit`, { token: stranger.token }), 404);
  });
});
