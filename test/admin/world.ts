// What the operator tests share: a user's project with frames that run on the one cloud agent of
// the test database, and the rows the tests check.
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { newProject, type TestUser } from '../helpers/factories.ts';
import { ADMIN, defaultSpace, newFrame, replicaEvents, sync } from '../helpers/frames.ts';

/** A project of `owner` with `count` frames, each Online on the agent (reported healthy). */
export async function runningProject(
  t: TestApp,
  owner: TestUser,
  agent: { token: string },
  count = 2,
) {
  const project = await newProject(t, owner);
  const space = await defaultSpace(t, owner, project.id);
  const frames = [];
  for (let i = 0; i < count; i++)
    frames.push(await newFrame(t, owner, project.id, space, { name: `f${i}` }));
  await sync(t, agent.token, {
    events: frames.flatMap((f) => replicaEvents(f.id, 1, 'healthy')),
  });
  for (const f of frames) expect((await frameRow(t, f.id)).last_status).toBe('Online');
  return { project, space, frames };
}

export const frameRow = (t: TestApp, frameId: string) =>
  t.db.selectFrom('frames').selectAll().where('id', '=', frameId).executeTakeFirstOrThrow();

/** What the agent is told to run, by frame id. */
export async function desiredOnAgent(t: TestApp, agent: { token: string }) {
  const state = await sync(t, agent.token);
  return Object.fromEntries(state.frames.map((f) => [f.frame_id, f.desired_state]));
}

/** Each frame is Suspended for billing and the agent is told to stop it. */
export async function expectSuspended(
  t: TestApp,
  agent: { token: string },
  frames: { id: string }[],
) {
  const desired = await desiredOnAgent(t, agent);
  for (const f of frames) {
    expect(await frameRow(t, f.id)).toMatchObject({
      desired_state: 'running',
      last_status: 'Suspended',
      last_status_reason: 'billing_past_due',
    });
    expect(desired[f.id]).toBe('stopped');
  }
}

/** Each frame is out of Suspended and the agent is told to run it again. */
export async function expectRestored(
  t: TestApp,
  agent: { token: string },
  frames: { id: string }[],
) {
  const desired = await desiredOnAgent(t, agent);
  for (const f of frames) {
    expect((await frameRow(t, f.id)).last_status).not.toBe('Suspended');
    expect(desired[f.id]).toBe('running');
  }
}

/** The frame's suspension and restore events, oldest first. */
export async function billingEvents(t: TestApp, frameId: string) {
  const rows = await t.db
    .selectFrom('frame_events')
    .select('type')
    .where('frame_id', '=', frameId)
    .where('type', 'in', ['suspended', 'restored'])
    .orderBy('id')
    .execute();
  return rows.map((e) => e.type);
}

/** The operator sets the billing status of a user or an org. */
export const setBilling = (
  t: TestApp,
  kind: 'orgs' | 'users',
  id: string,
  status: string,
  token = ADMIN,
) => t.put(`/v2/admin/${kind}/${id}/billing`, { token, body: { status } });

export const moveProject = (t: TestApp, projectId: string, body: Record<string, unknown>) =>
  t.post(`/v2/admin/projects/${projectId}/owner`, { token: ADMIN, body });

export const auditOf = (t: TestApp, targetId: string) =>
  t.db
    .selectFrom('audit_events')
    .selectAll()
    .where('target_id', '=', targetId)
    .where('action', 'like', '%.owner_transferred')
    .orderBy('id')
    .execute();

export const json = (v: unknown) =>
  (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, any>;
