// Issue 38: scaling a frame up does not show it Degraded. Over HTTP, as an agent reports: while
// the added replica is on its way the frame stays Online (its status never passes through
// Degraded), and it is Degraded only once a replica it should run has failed: crashed (also
// while the agent restarts it) or never healthy within its start window. A replica stopped by a
// scale-down and wanted again by a scale-up is on its way too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('scaling a frame', () => {
  it('up: Online while the added replica comes up; Degraded once it fails', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const a = await t.post(`/v2/projects/${project.id}/agents`, {
      token: ann.token,
      body: { name: 'edge' },
    });
    expect(a.status, a.text).toBe(201);
    const token: string = a.json.token;
    const f = await newFrame(t, ann, project.id, space, { agent_id: a.json.id });
    const path = framePath(f);
    const told = (await sync(t, token)).frames.find((x) => x.frame_id === f.id)!;
    const report = (replica: number, type: string, detail?: Record<string, unknown>) =>
      sync(t, token, {
        events: [
          {
            frame_id: f.id,
            replica,
            type,
            deployment_id: told.deployment_id,
            ...(detail ? { detail } : {}),
          },
        ],
      });
    const status = async () => {
      const r = await t.get(path, { token: ann.token });
      expect(r.status, r.text).toBe(200);
      return { status: r.json.status, reason: r.json.status_reason };
    };
    const scale = async (replica_count: number) => {
      const r = await t.patch(path, { token: ann.token, body: { replica_count } });
      expect(r.status, r.text).toBe(200);
    };
    const ONLINE = { status: 'Online', reason: null };

    await report(0, 'healthy');
    expect(await status()).toEqual(ONLINE);

    // Scaled up: the agent has not heard yet, then its new replica starts, then it is healthy.
    await scale(2);
    expect(await status()).toEqual(ONLINE);
    await report(1, 'pulling');
    expect(await status()).toEqual(ONLINE);
    await report(1, 'starting');
    expect(await status()).toEqual(ONLINE);
    await report(1, 'healthy');
    expect(await status()).toEqual(ONLINE);
    const events = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data;
    expect(events.filter((e: { status: string | null }) => e.status === 'Degraded')).toEqual([]);

    // A replica that fails after it started: Degraded, also while the agent restarts it.
    await report(1, 'crashed', { message: 'replica 1 exited (exit code 1)' });
    expect(await status()).toEqual({ status: 'Degraded', reason: 'crash' });
    await report(1, 'starting', { reason: 'crash' });
    expect(await status()).toEqual({ status: 'Degraded', reason: 'crash' });
    await report(1, 'healthy');
    expect(await status()).toEqual(ONLINE);

    // Down, then up again: the replica stopped by the scale-down is on its way, not failed.
    await scale(1);
    await report(1, 'stopped');
    expect(await status()).toEqual(ONLINE);
    await scale(2);
    expect(await status()).toEqual(ONLINE);
    // It never answers within its start window: now it has failed.
    await report(1, 'unhealthy', { reason: 'start_timeout' });
    expect(await status()).toEqual({ status: 'Degraded', reason: 'health_check_failed' });
  });
});
