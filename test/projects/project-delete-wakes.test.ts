// Deleting a project stops its frames at once: the agents that run them are woken, as when a
// frame alone is deleted, instead of learning it when their long poll runs out. A file of its
// own: the cloud agent here must be the only one, so that the frame is placed on it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, newFrame, sync } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

describe('deleting a project', () => {
  it("wakes the agent that runs the project's frames: it drops them at once, not after its wait", async () => {
    const owner = await newUser(t, 'waker');
    const project = await newProject(t, owner, 'Gone soon');
    const space = await defaultSpace(t, owner, project.id);
    const cloud = await cloudAgent(t, 'cloud-woken-by-delete');
    const frame = await newFrame(t, owner, project.id, space, { name: 'web' });
    expect((await sync(t, cloud.token)).frames.map((f) => f.frame_id)).toContain(frame.id);

    const started = Date.now();
    const waiting = t.post('/v2/agent/sync?wait=20', { token: cloud.token, body: {} });
    await t.untilHolding('frameplane_agent', cloud.id, 'the long poll');
    const gone = await t.del(`/v2/projects/${project.id}`, { token: owner.token });
    expect(gone.status, gone.text).toBe(204);
    const answer = await waiting;
    expect(answer.status, answer.text).toBe(200);
    // Well under the 20 s wait however loaded the machine: woken by the delete.
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(answer.json.frames.map((f: any) => f.frame_id)).not.toContain(frame.id);
  });
});
