// The statements of an agent's report (sync-reports.ts): replicas, build results, logs, and the
// frame rows they lock. Every function takes the report's transaction.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { wakeAfterCommit } from '../db/waker.ts';
import type { LogSource } from '../db/schema.ts';
import type { ReplicaReason, ReplicaState } from '../frames/frame-status.ts';

/** What an agent said of its edge in a sync; undefined when it did not say (kept as it was). */
export type EdgeReport = { http_port: number; https_port: number | null } | null | undefined;

/**
 * The columns that store what the agent said of its edge, none when it did not say. They go
 * into the statement that writes its last call anyway, so saying it costs no write of its own.
 */
export function edgeColumns(edge: EdgeReport) {
  if (edge === undefined) return {};
  return {
    edge_http_port: edge?.http_port ?? null,
    edge_https_port: edge?.https_port ?? null,
    edge_reported: true,
  };
}

/** The agent's heartbeat, and its edge if it said. */
export async function touchAgent(q: Queryable, agentId: string, now: Date, edge?: EdgeReport) {
  await q
    .updateTable('agents')
    .set({ last_seen_at: now, ...edgeColumns(edge) })
    .where('id', '=', agentId)
    .execute();
}

/** Locks the agent's frames among `ids`, in id order (the order every multi-frame writer uses). */
export async function lockFramesInOrder(q: Queryable, agentId: string, ids: string[]) {
  if (ids.length === 0) return;
  await q
    .selectFrom('frames')
    .select('id')
    .where('id', 'in', ids)
    .where('agent_id', '=', agentId)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** The frames of the agent that these deployments belong to. */
export async function framesOfDeployments(q: Queryable, agentId: string, deploymentIds: string[]) {
  if (deploymentIds.length === 0) return [];
  const rows = await q
    .selectFrom('deployments as d')
    .innerJoin('frames as f', 'f.id', 'd.frame_id')
    .select('f.id')
    .distinct()
    .where('d.id', 'in', deploymentIds)
    .where('f.agent_id', '=', agentId)
    .execute();
  return rows.map((r) => r.id);
}

/** The agent's frame a report names, locked; undefined when deleted or moved to another agent. */
export function lockReportedFrame(q: Queryable, agentId: string, frameId: string) {
  return q
    .selectFrom('frames')
    .select(['id', 'generation', 'crash_streak', 'desired_state', 'agent_id', 'replica_count'])
    .where('id', '=', frameId)
    .where('agent_id', '=', agentId)
    .forUpdate()
    .executeTakeFirst();
}

/** Every replica row of the frame (a report needs its own and the serving ones). */
export function replicasOf(q: Queryable, frameId: string) {
  return q.selectFrom('frame_replicas').selectAll().where('frame_id', '=', frameId).execute();
}

export async function saveReplica(
  q: Queryable,
  frameId: string,
  replica: number,
  row: {
    generation: number;
    state: ReplicaState;
    reason: ReplicaReason | null;
    deployment_id: string | null;
    since: Date;
  },
) {
  await q
    .insertInto('frame_replicas')
    .values({ frame_id: frameId, replica, ...row })
    .onConflict((oc) => oc.columns(['frame_id', 'replica']).doUpdateSet(row))
    .execute();
}

/**
 * The rows of releases that go on serving move to a newer generation, as the agent re-reports
 * them when a new release fails (runner/frame-runner.ts): the frame keeps their status.
 */
export async function keepServingUnder(
  q: Queryable,
  frameId: string,
  generation: number,
  releases: string[],
) {
  if (releases.length === 0) return;
  await q
    .updateTable('frame_replicas')
    .set({ generation })
    .where('frame_id', '=', frameId)
    .where('deployment_id', 'in', releases)
    .where('generation', '<', generation)
    .execute();
}

export async function setCrashStreak(q: Queryable, frameId: string, streak: number) {
  await q.updateTable('frames').set({ crash_streak: streak }).where('id', '=', frameId).execute();
}

/** A deployment of one of the agent's frames. */
export function deploymentOfAgent(q: Queryable, agentId: string, deploymentId: string) {
  return q
    .selectFrom('deployments as d')
    .innerJoin('frames as f', 'f.id', 'd.frame_id')
    .select(['d.id', 'd.frame_id', 'd.status', 'd.commit_sha', 'd.image'])
    .where('d.id', '=', deploymentId)
    .where('f.agent_id', '=', agentId)
    .executeTakeFirst();
}

/** The commit the agent resolved the branch to, and the image it built or reused. */
export async function setBuildFacts(
  q: Queryable,
  deploymentId: string,
  facts: { commit_sha?: string; image?: string },
) {
  await q
    .updateTable('deployments')
    .set({
      ...(facts.commit_sha ? { commit_sha: facts.commit_sha } : {}),
      ...(facts.image ? { image: sql<string>`coalesce(image, ${facts.image})` } : {}),
    })
    .where('id', '=', deploymentId)
    .execute();
}

/**
 * Which of `frameIds` are the agent's, locked (shared) so that a frame deleted meanwhile cannot
 * lose its rows under the insert that follows.
 */
export async function shareLockAgentFrames(q: Queryable, agentId: string, frameIds: string[]) {
  const rows = await q
    .selectFrom('frames')
    .select('id')
    .where('agent_id', '=', agentId)
    .where('id', 'in', frameIds)
    .forShare()
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Stores log lines and tells the frames' log streams (on commit). */
export async function insertLogs(
  q: Queryable,
  rows: Array<{ frame_id: string; replica: number; at: Date; line: string; source: LogSource }>,
) {
  if (rows.length === 0) return;
  await q.insertInto('frame_logs').values(rows).execute();
  for (const id of new Set(rows.map((r) => r.frame_id)))
    await wakeAfterCommit(q, 'frameplane_logs', id);
}

/** Stops a frame for back-off; answers the agent to tell. */
export function stopForBackoff(q: Queryable, frameId: string, now: Date) {
  return q
    .updateTable('frames')
    .set({
      desired_state: 'stopped',
      backoff_tripped_at: now,
      generation: sql`generation + 1`,
      updated_at: now,
    })
    .where('id', '=', frameId)
    .returning(['agent_id'])
    .executeTakeFirstOrThrow();
}
