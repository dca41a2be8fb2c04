// Frame and agent helpers: tests drive agents over HTTP exactly as a real agent does.
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import type { TestUser } from './factories.ts';

export const ADMIN = 'admin-token-for-tests';

export async function defaultSpace(t: TestApp, user: TestUser, projectId: string): Promise<string> {
  const r = await t.get(`/v2/projects/${projectId}/spaces`, { token: user.token });
  return r.json.data[0].id;
}

export async function newFrame(
  t: TestApp,
  user: TestUser,
  projectId: string,
  spaceId: string,
  extra: Record<string, unknown> = {},
) {
  const r = await t.post(`/v2/projects/${projectId}/spaces/${spaceId}/frames`, {
    token: user.token,
    body: {
      name: 'web',
      owner_id: user.id,
      git_repository: 'app',
      git_repository_owner: 'acme',
      git_repository_branch: 'main',
      port: 8080,
      ...extra,
    },
  });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

export async function cloudAgent(t: TestApp, name = 'cloud-1') {
  const r = await t.post('/v2/admin/agents', { token: ADMIN, body: { name } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; token: string };
}

export async function sync(
  t: TestApp,
  agentToken: string,
  body: Record<string, unknown> = {},
  wait?: number,
) {
  const r = await t.post(`/v2/agent/sync${wait !== undefined ? `?wait=${wait}` : ''}`, {
    token: agentToken,
    body,
  });
  expect(r.status, r.text).toBe(200);
  return r.json as { frames: Array<Record<string, any>>; sync_after_ms: number };
}

/** Reports every replica of a frame in one state. */
export function replicaEvents(
  frameId: string,
  count: number,
  type: string,
  extra: Record<string, unknown> = {},
) {
  return Array.from({ length: count }, (_, replica) => ({
    frame_id: frameId,
    replica,
    type,
    ...extra,
  }));
}

export const framePath = (f: { project_id: string; space_id: string; id: string }) =>
  `/v2/projects/${f.project_id}/spaces/${f.space_id}/frames/${f.id}`;

/** A user with a project, its default space and the database's only cloud agent (every cloud frame lands on it). */
export async function cloudWorld(t: TestApp) {
  const { newProject, newUser } = await import('./factories.ts');
  const ann = await newUser(t, 'ann');
  const project = await newProject(t, ann);
  const space = await defaultSpace(t, ann, project.id);
  const agent = await cloudAgent(t);
  return { ann, project, space, agent };
}

/**
 * An owner with a frame placed on a cloud agent of its own (`name`), a viewer through a team
 * grant and an outsider: the readers of a frame's history.
 */
export async function frameWithReaders(t: TestApp, name: string) {
  const { projectWithReaders } = await import('./factories.ts');
  const { ann, viewer, outsider, project } = await projectWithReaders(t);
  const space = await defaultSpace(t, ann, project.id);
  const agent = await cloudAgent(t, name);
  const frame = await newFrame(t, ann, project.id, space);
  // Place it on this agent (the least-loaded choice may have picked another test's).
  await t.db.updateTable('frames').set({ agent_id: agent.id }).where('id', '=', frame.id).execute();
  return { ann, viewer, outsider, agent, frame, path: framePath(frame) };
}

/** What the agent is told of one frame now. */
export async function toldOf(t: TestApp, agentToken: string, frameId: string) {
  const state = await sync(t, agentToken);
  const d = state.frames.find((f) => f.frame_id === frameId);
  if (!d) throw new Error(`the agent is told nothing of ${frameId}`);
  return d;
}

/** The agent's side of a deployment: it builds what it is told at `sha` (or runs the build it
 *  names) and reports every replica healthy; answers what it was told. */
export async function serveAt(t: TestApp, agentToken: string, frameId: string, sha: string) {
  const d = await toldOf(t, agentToken, frameId);
  await sync(t, agentToken, {
    builds: [{ deployment_id: d.deployment_id, state: 'succeeded', commit_sha: sha }],
    events: replicaEvents(frameId, d.replica_count, 'healthy', {
      generation: d.generation,
      deployment_id: d.deployment_id,
    }),
  });
  return d;
}
