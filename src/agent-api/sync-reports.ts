// What an agent reports in a sync, applied in one transaction: build results first, then replica
// events in order, each on its locked frame, then log lines, then metrics.
import type { Queryable } from '../db/database.ts';
import type { DeploymentFailure } from '../db/schema.ts';
import { afterEvent } from '../frames/backoff.ts';
import { completeIfHealthy, failDeployment, failInProgress } from '../deployments/deployments.ts';
import { latestDeployment } from '../deployments/deployments-dal.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import { REPLICA_REASONS, type ReplicaReason, type ReplicaState } from '../frames/frame-status.ts';
import { eventEffect } from '../frames/takeover.ts';
import type { AgentIdentity } from './agents-service.ts';
import {
  deploymentOfAgent,
  type EdgeReport,
  framesOfDeployments,
  insertLogs,
  keepServingUnder,
  lockFramesInOrder,
  lockReportedFrame,
  replicasOf,
  saveReplica,
  setBuildFacts,
  setCrashStreak,
  shareLockAgentFrames,
  stopForBackoff,
} from './sync-dal.ts';
import type { LogSource } from '../db/schema.ts';
import { type MetricsReport, storeMetrics } from '../frame-metrics/metrics-ingest.ts';

export interface SyncLog {
  frame_id: string;
  replica: number;
  at: string;
  line: string;
  source?: LogSource;
}
export interface SyncBuild {
  deployment_id: string;
  state: 'building' | 'succeeded' | 'failed';
  commit_sha?: string;
  image?: string;
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
export interface SyncReport {
  /** The `state` of the answer the agent holds (sync-service). */
  known_state?: string;
  events?: SyncEvent[];
  logs?: SyncLog[];
  builds?: SyncBuild[];
  /** The agent's edge (CONTRACT 5b); stored by the sync's heartbeat (sync-dal edgeColumns). */
  edge?: EdgeReport;
  /** Usage of the replicas and requests of the edge since the last samples (issue 39). */
  metrics?: MetricsReport;
}

/** Queues the check that trips the back-off of a replica stuck pulling since `at`. */
export type SchedulePullCheck = (q: Queryable, at: Date) => Promise<void>;

const replicaReason = (x: unknown): ReplicaReason | null =>
  (REPLICA_REASONS as readonly unknown[]).includes(x) ? (x as ReplicaReason) : null;
const messageOf = (detail?: Record<string, unknown>) =>
  typeof detail?.message === 'string' ? detail.message : null;
const parsedOr = (at: string | undefined, fallback: Date) =>
  at && !Number.isNaN(Date.parse(at)) ? new Date(at) : fallback;

/** Why a report of the deployment's own release fails it, if it does. */
function deploymentFailure(
  type: ReplicaState,
  reason: ReplicaReason | null,
): DeploymentFailure | undefined {
  if (type === 'crashed' || type === 'oom') {
    if (reason === 'image_pull_failed' || reason === 'clone_failed' || reason === 'port_in_use')
      return reason;
    return type === 'oom' ? 'oom' : 'crash';
  }
  if (type === 'unhealthy' && reason === 'start_timeout') return 'health_check_failed';
  if (type === 'unhealthy' && reason === 'port_in_use') return 'port_in_use';
  return undefined;
}

/** Applies a whole report inside the caller's transaction. */
export async function applyReport(
  trx: Queryable,
  agent: AgentIdentity,
  report: SyncReport,
  now: Date,
  schedulePullCheck: SchedulePullCheck,
) {
  // Lock every frame this report touches up front, in id order, as billing does: writers that
  // lock several frames in one order cannot deadlock each other. Builds name their deployment;
  // its frame is looked up first (a deployment never changes frame).
  const builds = report.builds ?? [];
  const built = await framesOfDeployments(trx, agent.id, [
    ...new Set(builds.map((b) => b.deployment_id)),
  ]);
  const reported = [...(report.events ?? []), ...(report.logs ?? [])].map((e) => e.frame_id);
  await lockFramesInOrder(trx, agent.id, [...new Set(reported.concat(built))].sort());
  const touched = new Set<string>();
  for (const b of builds) {
    const id = await applyBuild(trx, agent, b, now);
    if (id) touched.add(id);
  }
  for (const e of report.events ?? []) {
    const id = await applyEvent(trx, agent, e, now, schedulePullCheck);
    if (id) touched.add(id);
  }
  await refreshStatus(trx, [...touched], now);
  await storeLogs(trx, agent, report.logs ?? [], now);
  // Sums only: no frame row lock beyond the key share that keeps a deleted frame's rows out.
  await storeMetrics(trx, agent.id, report.metrics, now);
}

async function applyEvent(
  trx: Queryable,
  agent: AgentIdentity,
  e: SyncEvent,
  now: Date,
  schedulePullCheck: SchedulePullCheck,
): Promise<string | undefined> {
  const f = await lockReportedFrame(trx, agent.id, e.frame_id);
  if (!f) return undefined; // deleted or moved: the agent learns it from the desired state
  const generation = e.generation ?? f.generation;
  const at = parsedOr(e.at, now);
  const reason = replicaReason(e.detail?.reason);
  const rows = await replicasOf(trx, f.id);
  const prev = rows.find((r) => r.replica === e.replica);
  if (prev && prev.generation > generation) return f.id; // a late report of an older rollout
  // A newer release while an earlier one serves: its failures are its own (takeover.ts).
  const effect = eventEffect({ event: e, rows, replicaCount: f.replica_count });
  if (effect.save) {
    const same = prev && prev.state === e.type && prev.generation === generation;
    const since = same ? prev.since : now;
    await saveReplica(trx, f.id, e.replica, {
      generation,
      state: e.type,
      reason,
      deployment_id: e.deployment_id ?? null,
      since,
    });
    if (e.type === 'pulling') await schedulePullCheck(trx, since);
  }

  const deployment = await latestDeployment(trx, f.id);
  // An older generation's report does not count toward the current deployment.
  if (deployment && generation < deployment.generation) return f.id;
  const failed = e.type === 'crashed' || e.type === 'oom';
  // A replica of another release (the one still serving during a rollout) says nothing of this one.
  const ofDeployment = deployment && (!e.deployment_id || e.deployment_id === deployment.id);
  if (deployment?.status === 'in_progress' && ofDeployment) {
    const why = deploymentFailure(e.type, reason);
    if (why) {
      const ended = await failDeployment(trx, deployment.id, now, why, messageOf(e.detail));
      // The serving release goes on under the new generation, as after a failed build.
      if (ended) await keepServingUnder(trx, f.id, generation, effect.serving);
    } else if (e.type === 'healthy') await completeIfHealthy(trx, f.id, now);
  }
  if (effect.countsForBackoff) {
    const count = afterEvent(f.crash_streak, e.type);
    if (count.streak !== f.crash_streak) await setCrashStreak(trx, f.id, count.streak);
    if (count.trip && f.desired_state === 'running')
      await tripBackoff(trx, f.id, now, { crash_streak: count.streak });
  }
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
 * A build report: the commit the agent resolved the branch to, and a failed build, which fails
 * its deployment (build_failed) without counting as a crash.
 */
async function applyBuild(
  trx: Queryable,
  agent: AgentIdentity,
  b: SyncBuild,
  now: Date,
): Promise<string | undefined> {
  const d = await deploymentOfAgent(trx, agent.id, b.deployment_id);
  if (!d) return undefined;
  const commit = b.commit_sha && d.commit_sha === null ? b.commit_sha : undefined;
  if (commit || (b.image && d.image === null))
    await setBuildFacts(trx, d.id, { commit_sha: commit, image: b.image });
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

async function storeLogs(trx: Queryable, agent: AgentIdentity, logs: SyncLog[], now: Date) {
  if (logs.length === 0) return;
  const mine = await shareLockAgentFrames(trx, agent.id, [...new Set(logs.map((l) => l.frame_id))]);
  await insertLogs(
    trx,
    logs
      .filter((l) => mine.has(l.frame_id))
      .map((l) => ({
        frame_id: l.frame_id,
        replica: l.replica,
        at: Number.isNaN(Date.parse(l.at)) ? now : new Date(l.at),
        line: l.line,
        source: l.source ?? 'app',
      })),
  );
}

/** Stops a frame for back-off: desired stopped, reason backoff_tripped, the agent told. */
export async function tripBackoff(
  q: Queryable,
  frameId: string,
  now: Date,
  detail: Record<string, unknown>,
) {
  const f = await stopForBackoff(q, frameId, now);
  await failInProgress(q, frameId, now, 'backoff_tripped');
  await recordFrameEvent(q, frameId, now, {
    type: 'backoff_tripped',
    reason: 'backoff_tripped',
    detail,
  });
  await notifyAgents(q, [f.agent_id]);
}
