// The agent sync (CONTRACT 6): heartbeat, report and instruction in one call. Reported events
// apply in order, each on its locked frame; then the agent gets the whole desired state of its
// frames, or, with ?wait=, gets it when that state changes (LISTEN/NOTIFY, so a change made
// through any instance wakes it).
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import { afterEvent } from '../frames/backoff.ts';
import { REPLICA_REASONS, type ReplicaReason, type ReplicaState } from '../frames/frame-status.ts';
import type { DeploymentFailure } from '../db/schema.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import { completeIfHealthy, failDeployment } from '../frames/deployments.ts';
import type { AgentIdentity } from './agents-service.ts';

export interface SyncLog {
  frame_id: string;
  replica: number;
  at: string;
  line: string;
}
export interface SyncBuild {
  deployment_id: string;
  state: 'building' | 'succeeded' | 'failed';
  commit_sha?: string;
  message?: string;
  at?: string;
}
export interface SyncEvent {
  frame_id: string;
  replica: number;
  type: ReplicaState;
  at?: string;
  detail?: Record<string, unknown>;
  generation?: number;
  /** The deployment whose release the replica runs. */
  deployment_id?: string;
}

const replicaReason = (x: unknown): ReplicaReason | null =>
  (REPLICA_REASONS as readonly unknown[]).includes(x) ? (x as ReplicaReason) : null;
const messageOf = (detail?: Record<string, unknown>) =>
  typeof detail?.message === 'string' ? detail.message : null;

/** Why a report of the deployment's own release fails it, if it does. */
function deploymentFailure(
  type: ReplicaState,
  reason: ReplicaReason | null,
): DeploymentFailure | undefined {
  if (type === 'crashed' || type === 'oom') {
    if (reason === 'image_pull_failed' || reason === 'port_in_use') return reason;
    return type === 'oom' ? 'oom' : 'crash';
  }
  if (type === 'unhealthy' && reason === 'start_timeout') return 'health_check_failed';
  if (type === 'unhealthy' && reason === 'port_in_use') return 'port_in_use';
  return undefined;
}

const SYNC_AFTER_MS = 5000;

/**
 * What a decrypted env holds in memory, over-estimated: two bytes per character (V8 keeps a
 * string with any non-Latin-1 character in UTF-16) and 64 bytes per property and per object.
 */
export function envMemoryBytes(env: Record<string, string>): number {
  let n = 64;
  for (const [k, v] of Object.entries(env)) n += 64 + 2 * (k.length + v.length);
  return n;
}

// The hostnames routed to frame `f`: verified domains only (a pending claim proves nothing, see
// frames/domains-service.ts), in name order so that the fingerprint is stable.
const verifiedHostnames = sql<string[]>`coalesce((select array_agg(d.hostname order by d.hostname)
  from domains d where d.frame_id = f.id and d.verified_at is not null), '{}')`.as('domains');

interface Deps {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  notifier?: Notifier;
  offlineAfterSeconds: number;
  schedulePullCheck(q: Queryable, at: Date): Promise<void>;
  /** Bytes of decrypted env kept between syncs (ENV_CACHE_MAX_BYTES). */
  envCacheMaxBytes: number;
}

export function createSyncService({
  db,
  clock,
  sealer,
  notifier,
  offlineAfterSeconds,
  schedulePullCheck,
  envCacheMaxBytes,
}: Deps) {
  // A deployment's env never changes: decrypt it once, not on every sync of every frame. Keyed
  // by frame, since a sync reads only a frame's latest deployment: a new one replaces the old
  // entry rather than sitting beside it. Bounded by bytes, as one env may weigh ENV_MAX_BYTES;
  // an env larger than the whole cache is decrypted on each sync and never kept.
  const envCache = new LRUCache<string, { deploymentId: string; env: Record<string, string> }>({
    maxSize: envCacheMaxBytes,
    sizeCalculation: (entry) => envMemoryBytes(entry.env),
  });
  const envOf = (frameId: string, deploymentId: string, sealed: string) => {
    const cached = envCache.get(frameId);
    if (cached?.deploymentId === deploymentId) return cached.env;
    const env = JSON.parse(sealer.open(sealed)) as Record<string, string>;
    envCache.set(frameId, { deploymentId, env });
    return env;
  };

  async function applyEvent(
    trx: Queryable,
    agent: AgentIdentity,
    e: SyncEvent,
    now: Date,
  ): Promise<string | undefined> {
    const f = await trx
      .selectFrom('frames')
      .select(['id', 'generation', 'crash_streak', 'desired_state', 'agent_id'])
      .where('id', '=', e.frame_id)
      .where('agent_id', '=', agent.id)
      .forUpdate()
      .executeTakeFirst();
    if (!f) return undefined; // deleted or moved: the agent learns it from the desired state
    const generation = e.generation ?? f.generation;
    const at = e.at && !Number.isNaN(Date.parse(e.at)) ? new Date(e.at) : now;
    const reason = replicaReason(e.detail?.reason);
    const prev = await trx
      .selectFrom('frame_replicas')
      .selectAll()
      .where('frame_id', '=', f.id)
      .where('replica', '=', e.replica)
      .executeTakeFirst();
    if (prev && prev.generation > generation) return f.id; // a late report of an older rollout
    const since =
      prev && prev.state === e.type && prev.generation === generation ? prev.since : now;
    const row = {
      generation,
      state: e.type,
      reason,
      deployment_id: e.deployment_id ?? null,
      since,
    };
    await trx
      .insertInto('frame_replicas')
      .values({ frame_id: f.id, replica: e.replica, ...row })
      .onConflict((oc) => oc.columns(['frame_id', 'replica']).doUpdateSet(row))
      .execute();
    if (e.type === 'pulling') await schedulePullCheck(trx, since);

    const deployment = await trx
      .selectFrom('deployments')
      .select(['id', 'status', 'generation'])
      .where('frame_id', '=', f.id)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (deployment && generation < deployment.generation) return f.id; // does not count toward the current deployment
    const failed = e.type === 'crashed' || e.type === 'oom';
    // A replica of another release (the one still serving during a rollout) says nothing of this one.
    const ofDeployment = deployment && (!e.deployment_id || e.deployment_id === deployment.id);
    if (deployment?.status === 'in_progress' && ofDeployment) {
      const why = deploymentFailure(e.type, reason);
      if (why) await failDeployment(trx, deployment.id, now, why, messageOf(e.detail));
      else if (e.type === 'healthy') await completeIfHealthy(trx, f.id, now);
    }
    const count = afterEvent(f.crash_streak, e.type);
    if (count.streak !== f.crash_streak)
      await trx
        .updateTable('frames')
        .set({ crash_streak: count.streak })
        .where('id', '=', f.id)
        .execute();
    if (count.trip && f.desired_state === 'running')
      await tripBackoff(trx, f.id, now, { crash_streak: count.streak });
    if (failed || e.type === 'unhealthy') {
      // Ordered by our clock (the id); the agent's own time of the report stays in the detail.
      await recordFrameEvent(trx, f.id, now, {
        type: 'replica',
        detail: {
          replica: e.replica,
          state: e.type,
          generation,
          ...(e.deployment_id ? { deployment_id: e.deployment_id } : {}),
          reported_at: at.toISOString(),
          ...(e.detail ?? {}),
        },
      });
    }
    return f.id;
  }

  /**
   * Build reports, before the events of the same sync: the commit the agent resolved the branch
   * to, and a failed build, which fails its deployment (build_failed) without counting as a crash.
   */
  async function applyBuild(
    trx: Queryable,
    agent: AgentIdentity,
    b: SyncBuild,
    now: Date,
  ): Promise<string | undefined> {
    const d = await trx
      .selectFrom('deployments as d')
      .innerJoin('frames as f', 'f.id', 'd.frame_id')
      .select(['d.id', 'd.frame_id', 'd.status', 'd.commit_sha'])
      .where('d.id', '=', b.deployment_id)
      .where('f.agent_id', '=', agent.id)
      .executeTakeFirst();
    if (!d) return undefined;
    if (b.commit_sha && d.commit_sha === null) {
      await trx
        .updateTable('deployments')
        .set({ commit_sha: b.commit_sha })
        .where('id', '=', d.id)
        .execute();
    }
    if (b.state === 'failed' && d.status === 'in_progress') {
      const message = b.message ?? null;
      await failDeployment(trx, d.id, now, 'build_failed', message);
      await recordFrameEvent(trx, d.frame_id, now, {
        type: 'build_failed',
        detail: {
          deployment_id: d.id,
          commit_sha: d.commit_sha ?? b.commit_sha ?? null,
          message,
          ...(b.at && !Number.isNaN(Date.parse(b.at))
            ? { reported_at: new Date(b.at).toISOString() }
            : {}),
        },
      });
    }
    return d.frame_id;
  }

  async function desiredState(agentId: string) {
    const rows = await db
      .selectFrom('frames as f')
      .innerJoin('projects as p', 'p.id', 'f.project_id')
      .innerJoin('users as o', 'o.id', 'p.owner_id')
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('deployments as d')
            .select([
              'd.id',
              'd.git_repository',
              'd.git_repository_owner',
              'd.git_repository_branch',
              'd.commit_sha',
              'd.env_sealed',
              'd.status',
              'd.failure_reason',
            ])
            .whereRef('d.frame_id', '=', 'f.id')
            .orderBy('d.id', 'desc')
            .limit(1)
            .as('d'),
        (j) => j.onTrue(),
      )
      .select([
        'f.id',
        'f.generation',
        'f.desired_state',
        'f.replica_count',
        'f.port',
        'f.health_check_path',
        'o.billing_status',
        'd.id as deployment_id',
        'd.git_repository',
        'd.git_repository_owner',
        'd.git_repository_branch',
        'd.commit_sha',
        'd.env_sealed',
        'd.status',
        'd.failure_reason',
        sql<
          Array<{ id: string; name: string; mount_path: string; size_gb: number }>
        >`coalesce((select json_agg(json_build_object(
          'id', v.id, 'name', v.name, 'mount_path', v.mount_path, 'size_gb', v.size_gb) order by v.id) from volumes v where v.frame_id = f.id), '[]')`.as(
          'volumes',
        ),
        verifiedHostnames,
      ])
      .where('f.agent_id', '=', agentId)
      .orderBy('f.id')
      .execute();
    return rows.map((r) => ({
      frame_id: r.id,
      generation: r.generation,
      // Billing suspension scales to zero without touching the frame's own desired state.
      desired_state: r.billing_status === 'past_due' ? ('stopped' as const) : r.desired_state,
      replica_count: r.replica_count,
      port: r.port,
      health_check_path: r.health_check_path,
      // The latest deployment did not build: the agent must not build it again (a new deployment will come).
      build_failed: r.status === 'failed' && r.failure_reason === 'build_failed',
      git_repository_owner: r.git_repository_owner,
      git_repository: r.git_repository,
      git_repository_branch: r.git_repository_branch,
      deployment_id: r.deployment_id,
      commit_sha: r.commit_sha,
      env: envOf(r.id, r.deployment_id, r.env_sealed),
      volumes: r.volumes,
      domains: r.domains,
    }));
  }

  // Everything else the agent is told moves the generation, or comes with a new deployment (which
  // does), except the verified domains, which are routing and part of the fingerprint themselves.
  const fingerprint = (
    frames: Array<{
      frame_id: string;
      generation: number;
      desired_state: string;
      build_failed: boolean;
      domains: string[];
    }>,
  ) =>
    frames
      .map(
        (f) =>
          `${f.frame_id}:${f.generation}:${f.desired_state}` +
          `${f.build_failed ? ':build_failed' : ''}:${f.domains.join(' ')}`,
      )
      .join(',');

  /** What identifies the desired state, without reading it all: ids, generations, failed builds. */
  async function currentFingerprint(agentId: string) {
    const rows = await db
      .selectFrom('frames as f')
      .innerJoin('projects as p', 'p.id', 'f.project_id')
      .innerJoin('users as o', 'o.id', 'p.owner_id')
      .select([
        'f.id as frame_id',
        'f.generation',
        sql<string>`case when o.billing_status = 'past_due' then 'stopped' else f.desired_state end`.as(
          'desired_state',
        ),
        // From the summary on the row (migrations/0005): no join with deployments.
        sql<boolean>`coalesce(f.latest_deployment->>'status' = 'failed' and f.latest_deployment->>'failure_reason' = 'build_failed', false)`.as(
          'build_failed',
        ),
        verifiedHostnames,
      ])
      .where('f.agent_id', '=', agentId)
      .orderBy('f.id')
      .execute();
    return fingerprint(rows);
  }

  async function touch(agentId: string) {
    await db
      .updateTable('agents')
      .set({ last_seen_at: clock.now() })
      .where('id', '=', agentId)
      .execute();
  }

  return {
    desiredState,

    /** What the env cache holds (for tests and the growth measurement). */
    envCacheStats: () => ({
      entries: envCache.size,
      bytes: envCache.calculatedSize,
      maxBytes: envCacheMaxBytes,
    }),

    async sync(
      agent: AgentIdentity,
      body: { events?: SyncEvent[]; logs?: SyncLog[]; builds?: SyncBuild[] },
      waitSeconds: number,
      signal?: AbortSignal,
    ) {
      await touch(agent.id);
      const now = clock.now();
      const reporting = Boolean(body.events?.length || body.builds?.length);
      const before = reporting ? await currentFingerprint(agent.id) : undefined;
      if (body.events?.length || body.logs?.length || body.builds?.length) {
        await transaction(db, async (trx) => {
          // Lock every frame this report touches up front, in id order, as billing does: writers
          // that lock several frames in one order cannot deadlock each other. Builds name their
          // deployment; its frame is looked up first (a deployment never changes frame).
          const built = await framesOfDeployments(trx, agent.id, body.builds ?? []);
          const ids = [
            ...new Set(
              [...(body.events ?? []), ...(body.logs ?? [])].map((e) => e.frame_id).concat(built),
            ),
          ].sort();
          if (ids.length)
            await trx
              .selectFrom('frames')
              .select('id')
              .where('id', 'in', ids)
              .where('agent_id', '=', agent.id)
              .orderBy('id')
              .forUpdate()
              .execute();
          const touched = new Set<string>();
          for (const b of body.builds ?? []) {
            const id = await applyBuild(trx, agent, b, now);
            if (id) touched.add(id);
          }
          for (const e of body.events ?? []) {
            const id = await applyEvent(trx, agent, e, now);
            if (id) touched.add(id);
          }
          await refreshStatus(trx, [...touched], now);
          await storeLogs(trx, agent, body.logs ?? [], now);
        });
      }
      // Register for wake-ups before reading, so a change in between is not missed.
      // Holding stays under the offline threshold, so a waiting agent never looks offline.
      const holdMs = Math.min(waitSeconds, 30, Math.max(1, offlineAfterSeconds / 2)) * 1000;
      const deadline = Date.now() + holdMs;
      const listening =
        notifier && holdMs > 0 ? notifier.listen('frameplane_agent', agent.id) : undefined;
      try {
        let frames = await desiredState(agent.id);
        const first = fingerprint(frames);
        // What the agent reported may itself have changed its instructions (a back-off trip):
        // then it must hear at once.
        while (listening && (before === undefined || first === before) && !signal?.aborted) {
          const left = deadline - Date.now();
          if (left <= 0 || !(await listening.next(left, signal))) break;
          if ((await currentFingerprint(agent.id)) === first) continue;
          frames = await desiredState(agent.id);
          break;
        }
        if (holdMs > 0) await touch(agent.id);
        return { frames, sync_after_ms: SYNC_AFTER_MS };
      } finally {
        listening?.close();
      }
    },
  };
}

async function framesOfDeployments(q: Queryable, agentId: string, builds: SyncBuild[]) {
  if (builds.length === 0) return [];
  const rows = await q
    .selectFrom('deployments as d')
    .innerJoin('frames as f', 'f.id', 'd.frame_id')
    .select('f.id')
    .distinct()
    .where('d.id', 'in', [...new Set(builds.map((b) => b.deployment_id))])
    .where('f.agent_id', '=', agentId)
    .execute();
  return rows.map((r) => r.id);
}

async function storeLogs(trx: Queryable, agent: AgentIdentity, logs: SyncLog[], now: Date) {
  if (logs.length === 0) return;
  // Locked (shared) so that a frame deleted meanwhile cannot lose its rows under our insert.
  const mine = new Set(
    (
      await trx
        .selectFrom('frames')
        .select('id')
        .where('agent_id', '=', agent.id)
        .where('id', 'in', [...new Set(logs.map((l) => l.frame_id))])
        .forShare()
        .execute()
    ).map((r) => r.id),
  );
  const rows = logs
    .filter((l) => mine.has(l.frame_id))
    .map((l) => ({
      frame_id: l.frame_id,
      replica: l.replica,
      at: Number.isNaN(Date.parse(l.at)) ? now : new Date(l.at),
      line: l.line,
    }));
  if (rows.length === 0) return;
  await trx.insertInto('frame_logs').values(rows).execute();
  for (const id of new Set(rows.map((r) => r.frame_id)))
    await sql`select pg_notify('frameplane_logs', ${id})`.execute(trx);
}

/** Stops a frame for back-off: desired stopped, reason backoff_tripped, the agent told. */
export async function tripBackoff(
  q: Queryable,
  frameId: string,
  now: Date,
  detail: Record<string, unknown>,
) {
  const f = await q
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
  await q
    .updateTable('deployments')
    .set({ status: 'failed', finished_at: now, failure_reason: 'backoff_tripped' })
    .where('frame_id', '=', frameId)
    .where('status', '=', 'in_progress')
    .execute();
  await recordFrameEvent(q, frameId, now, {
    type: 'backoff_tripped',
    reason: 'backoff_tripped',
    detail,
  });
  await notifyAgents(q, [f.agent_id]);
}

export type SyncService = ReturnType<typeof createSyncService>;
