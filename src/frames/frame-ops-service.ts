// Stop, start and deploy (spec 3 and 4, CONTRACT 5). The desired state changes together with
// its event, atomically, as decided on the frame's current facts: a deploy under the frame's
// lock; a stop or a start on the frame as read, written only if the frame did not move since,
// else under the lock too (docs/architecture.md, Writes and their wake-ups). Every request
// records exactly one event, no-ops included, so parallel requests stay traceable.
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { decideProject, type AccessService } from '../access/access-service.ts';
import { canOnProject } from '../access/roles.ts';
import type { Sealer } from '../secrets.ts';
import { auditRow } from '../audit/audit-dal.ts';
import { notFound, serviceUnavailable } from '../errors.ts';
import type { ReleaseOf } from '../deployments/deployments.ts';
import {
  billingPastDue,
  type ReleaseTrigger,
  type RollbackConfig,
  rollbackRelease,
  servingRelease,
  startRelease,
} from '../deployments/releases.ts';
import { frameEventRow, statusChange, statusEvent } from './frame-events.ts';
import { notificationOf } from '../notifications/events.ts';
import { notifyFrameEvent } from '../notifications/notify.ts';
import {
  type FrameChange,
  type Guard,
  type OperationWrite,
  operationWriter,
  writeOperations,
} from './frame-ops-dal.ts';
import { agentOnline } from './frame-view.ts';
import type { Waker } from '../db/waker.ts';
import { type FrameForCaller, type FrameWithFacts, lockFrameIn } from './frames-dal.ts';
import type { FramesService } from './frames-service.ts';

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  waker: Waker;
  frames: Pick<FramesService, 'load' | 'view' | 'forCaller' | 'wrote' | 'known'>;
  offlineAfterSeconds: number;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  deploymentHistory: number;
  /** Releases whose builds the agents keep per frame, to roll back to (RELEASES_KEPT). */
  releasesKept: number;
}

export function createFrameOpsService({
  db,
  clock,
  access,
  sealer,
  waker,
  frames,
  offlineAfterSeconds,
  deploymentHistory,
  releasesKept,
}: Deps) {
  const writer = operationWriter(db);

  /** Cloud frames never wait; a self-hosted frame's agent is online if it called lately. */
  function agentReachable(f: FrameWithFacts) {
    if (f.runtime_kind !== 'agent' || !f.agent_id) return true;
    return agentOnline(f.agent_last_seen_at, clock.now(), offlineAfterSeconds);
  }

  /** Self-hosted frames need their agent online to be stopped or started. */
  function requireAgentOnline(f: FrameWithFacts) {
    if (agentReachable(f)) return;
    const seen = f.agent_last_seen_at;
    throw serviceUnavailable(
      'agent_offline',
      `The frame's self-hosted agent is offline (last seen ${seen ? seen.toISOString() : 'never'}); try again when it is back.`,
      Math.max(5, Math.min(60, offlineAfterSeconds)),
    );
  }

  /**
   * Locks the frame, then reads it with every fact and the caller's role. Read after the lock,
   * the facts are current: no other change to this frame can commit until this one does.
   */
  async function lockForOperation(
    trx: Queryable,
    actor: Actor,
    projectId: string,
    spaceId: string,
    frameId: string,
  ) {
    const f =
      (await lockFrameIn(trx, projectId, spaceId, frameId)) &&
      (await frames.forCaller(actor.userId, projectId, spaceId, frameId, trx));
    if (!f) {
      // Only now tell a project out of reach (404 for it, or 403) from a missing frame.
      await access.requireProject(actor.userId, projectId, 'frame.operate', trx);
      throw notFound('frame');
    }
    decideProject(f.role, 'frame.operate');
    return f;
  }

  /**
   * Decides a stop or a start on the frame as read, and writes it in one statement: with
   * `unchangedSince`, only if the frame did not move since it was read (else undefined).
   * Undefined on the pool, too, for a change that notifications tell of: it needs the lock.
   */
  async function writeDesired(
    q: Queryable,
    actor: Actor,
    f: FrameForCaller,
    desired: 'running' | 'stopped',
    now: Date,
    unchangedSince?: string,
    guard?: Guard,
  ) {
    requireAgentOnline(f);
    if (desired === 'running' && f.billing_status === 'past_due') throw billingPastDue();
    const noop = f.desired_state === desired;
    const type = desired === 'running' ? 'start' : 'stop';
    // A start is a fresh attempt: it clears a back-off trip (as a push or a deploy does).
    const clears = !noop && desired === 'running';
    // The status is derived here, from the facts as read, and written with the change.
    const change = statusChange({
      ...f,
      desired_state: desired,
      ...(clears ? { crash_streak: 0, backoff_tripped_at: null } : {}),
    });
    // A status that notification endpoints may want (a start that finds its replicas healthy,
    // or failed) is queued in a transaction with the change: not on the one-statement path.
    const notifies = change !== undefined && notificationOf(statusEvent(change)) !== undefined;
    if (notifies && q === db) return undefined;
    // The row as read is the row written over (see OperationWrite): a new generation is the
    // one read plus one.
    const set: FrameChange = {
      desired_state: desired,
      updated_at: noop ? null : now,
      clears_backoff: clears,
      last_status: change ? change.status : f.last_status,
      last_status_reason: change ? change.reason : f.last_status_reason,
      generation: noop ? f.generation : f.generation + 1,
      version: noop ? f.version : f.version + 1,
    };
    const op = frameEventRow(
      f.id,
      now,
      { type, actorId: actor.userId, detail: { noop } },
      f.last_event_id,
    );
    const write: OperationWrite = {
      frameId: f.id,
      projectId: f.project_id,
      spaceId: f.space_id,
      unchangedSince,
      guard,
      set,
      events: change ? [op, frameEventRow(f.id, now, statusEvent(change), op.id)] : [op],
      audit: noop
        ? undefined
        : auditRow(actor, now, {
            projectId: f.project_id,
            action: `frame.${type}`,
            targetType: 'frame',
            targetId: f.id,
            before: { desired_state: f.desired_state },
            after: { desired_state: desired },
          }),
    };
    const row = q === db ? await writer(write) : (await writeOperations(q, [write]))[0];
    if (!row) return undefined;
    if (notifies && change) await notifyFrameEvent(q, f.id, now, statusEvent(change));
    const after = { ...f, ...row };
    // Written outside a transaction, the row is committed as it is now (frame-rows.ts).
    if (q === db) frames.wrote(after);
    return { view: frames.view(after), agentId: noop ? null : f.agent_id };
  }

  /**
   * One round trip: the stop or start decided on the frame and the caller's role as this
   * instance last saw them (frame-rows.ts, role-memo.ts), written on the condition that none of
   * what it was decided on moved since: the frame's row, the role's access versions, the payer's
   * billing. (An agent that was online then is online now: its last call only moves forward.)
   * Undefined when something is not remembered, moved, or would refuse: then the request is
   * decided on what is read now, refusals included.
   */
  async function fromMemory(
    actor: Actor,
    projectId: string,
    spaceId: string,
    frameId: string,
    desired: 'running' | 'stopped',
    now: Date,
  ) {
    const known = frames.known(frameId);
    const hint = access.remembered(actor.userId, projectId);
    if (!known || !hint?.role || known.project_id !== projectId || known.space_id !== spaceId)
      return undefined;
    const refused =
      !canOnProject(hint.role, 'frame.operate') ||
      !agentReachable(known) ||
      (desired === 'running' && known.billing_status === 'past_due');
    if (refused) return undefined;
    const f = {
      ...known,
      role: hint.role,
      caller_access_version: hint.userVersion,
      project_access_version: hint.projectVersion,
    };
    return writeDesired(db, actor, f, desired, now, known.row_version, {
      userId: actor.userId,
      userVersion: hint.userVersion,
      projectVersion: hint.projectVersion,
      billing: known.billing_status,
    });
  }

  async function setDesired(
    actor: Actor,
    projectId: string,
    spaceId: string,
    frameId: string,
    desired: 'running' | 'stopped',
  ) {
    const now = clock.now();
    let done = await fromMemory(actor, projectId, spaceId, frameId, desired, now);
    // Otherwise two round trips when nothing races: read the frame and the caller's role
    // (remembered, as reads do), then write on the condition that the frame row is still the
    // one read.
    if (!done) {
      const seen = await frames.forCaller(actor.userId, projectId, spaceId, frameId);
      if (seen) decideProject(seen.role, 'frame.operate');
      done = seen && (await writeDesired(db, actor, seen, desired, now, seen.row_version));
    }
    // The frame moved in between (or is out of reach): decide again under its lock. The answer
    // is read there too: it shows this request's outcome, not a later one.
    done ||= await transaction(db, async (trx) => {
      const f = await lockForOperation(trx, actor, projectId, spaceId, frameId);
      const locked = await writeDesired(trx, actor, f, desired, now);
      if (!locked) throw new Error(`frame ${frameId} vanished under its lock`);
      return locked;
    });
    // Committed: wake the frame's event streams and its agent's long poll (db/waker.ts).
    waker.wake('frameplane_frame_events', frameId);
    waker.wake('frameplane_agent', done.agentId);
    return done.view;
  }

  /** A new deployment, of the frame's branch or of an earlier release's build (`pick`). */
  async function release(
    actor: Actor,
    projectId: string,
    spaceId: string,
    frameId: string,
    trigger: ReleaseTrigger,
    pick: (trx: Queryable) => Promise<ReleaseOf | undefined>,
    commitSha?: string,
  ) {
    const at = clock.now();
    return transaction(db, async (trx) => {
      const f = await lockForOperation(trx, actor, projectId, spaceId, frameId);
      return startRelease(trx, sealer, f, {
        actor,
        trigger,
        at,
        keep: deploymentHistory,
        billing: f.billing_status,
        release: f.billing_status === 'past_due' ? undefined : await pick(trx),
        commitSha,
      });
    });
  }

  return {
    stop: (actor: Actor, p: string, s: string, f: string) => setDesired(actor, p, s, f, 'stopped'),
    start: (actor: Actor, p: string, s: string, f: string) => setDesired(actor, p, s, f, 'running'),

    /** A manual deploy: builds the branch's head, or `commitSha`. */
    deploy: (actor: Actor, p: string, s: string, f: string, commitSha?: string) =>
      release(actor, p, s, f, 'manual', async () => undefined, commitSha),

    /** The serving release again, its build and env: replicas replaced, nothing built. */
    restart: (actor: Actor, p: string, s: string, f: string) =>
      release(actor, p, s, f, 'restart', (trx) => servingRelease(trx, f)),

    /** An earlier release's build, with its env (or the frame's current one). */
    rollback: (
      actor: Actor,
      p: string,
      s: string,
      f: string,
      deploymentId: string,
      config: RollbackConfig,
    ) =>
      release(actor, p, s, f, 'rollback', (trx) =>
        rollbackRelease(trx, f, deploymentId, config, releasesKept),
      ),
  };
}

export type FrameOpsService = ReturnType<typeof createFrameOpsService>;
