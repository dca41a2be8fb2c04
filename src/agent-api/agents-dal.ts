// Agents' rows: registration, the project's list, removal, and the token lookup of each sync.
import type { Queryable } from '../db/database.ts';

export function insertAgent(
  q: Queryable,
  agent: {
    id: string;
    kind: 'cloud' | 'self_hosted';
    project_id: string | null;
    name: string;
    token_hash: Buffer;
    created_at: Date;
  },
) {
  return q.insertInto('agents').values(agent).returningAll().executeTakeFirstOrThrow();
}

/** The project's agents, as a query for paging. */
export function agentsOfProject(q: Queryable, projectId: string) {
  return q.selectFrom('agents').selectAll().where('project_id', '=', projectId);
}

/** The project's agent, locked so that no frame is placed on it while it is removed. */
export function lockProjectAgent(q: Queryable, projectId: string, agentId: string) {
  return q
    .selectFrom('agents')
    .select('id')
    .where('id', '=', agentId)
    .where('project_id', '=', projectId)
    .forUpdate()
    .executeTakeFirst();
}

export async function agentRunsFrames(q: Queryable, agentId: string): Promise<boolean> {
  const row = await q
    .selectFrom('frames')
    .select('id')
    .where('agent_id', '=', agentId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteAgent(q: Queryable, agentId: string) {
  await q.deleteFrom('agents').where('id', '=', agentId).execute();
}

export function agentByTokenHash(q: Queryable, tokenHash: Buffer) {
  return q
    .selectFrom('agents')
    .select(['id', 'kind', 'project_id'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}
