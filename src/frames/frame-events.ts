// Frame history: operations (who stopped, started, deployed, changed what) and status changes.
// Every change calls refreshStatus() inside its transaction; when the derived status moved, a
// status event is recorded and listeners (event streams) are told on commit.
import type { Queryable } from '../db/database.ts';
import type { Actor } from '../actor.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { newIdAfter } from '../ids.ts';
import { frameStatus, type FrameStatus, type StatusReason } from './frame-status.ts';
import { factsOf } from './frame-view.ts';
import {
  type FrameWithFacts,
  framesWithFactsByIds,
  notifyAgent,
  setLastStatus,
} from './frames-dal.ts';
import {
  insertFrameEvent,
  type NewFrameEvent,
  newestEventIdLocked,
} from '../history/history-dal.ts';
import { notifyFrameEvent } from '../notifications/notify.ts';

export interface FrameEventInput {
  type: string;
  actorId?: string | null;
  detail?: unknown;
  status?: string | null;
  reason?: string | null;
}

/** An event's row, its id sorting after `newest` (the frame's newest event id, read locked). */
export function frameEventRow(
  frameId: string,
  at: Date,
  e: FrameEventInput,
  newest: string | null | undefined,
): NewFrameEvent {
  return {
    id: newIdAfter('event', at, newest ?? undefined),
    frame_id: frameId,
    type: e.type,
    status: e.status ?? null,
    status_reason: e.reason ?? null,
    detail: e.detail === undefined ? null : JSON.stringify(e.detail),
    actor_id: e.actorId ?? null,
    at,
  };
}

export async function recordFrameEvent(
  q: Queryable,
  frameId: string,
  at: Date,
  e: FrameEventInput,
) {
  // Event ids are the positions of event streams (Last-Event-ID), so for one frame they must grow
  // in commit order, also when several instances write. The frame's row lock orders the writers
  // (callers usually hold it already); under it, the new id sorts after the frame's newest event.
  const newest = await newestEventIdLocked(q, frameId);
  await insertFrameEvent(q, frameEventRow(frameId, at, e, newest));
  // The projects' notification endpoints that want this event, in the same transaction.
  await notifyFrameEvent(q, frameId, at, e);
}

/** A change an actor made to a part of a frame (a domain, a volume). */
export interface PartChange {
  projectId: string;
  frameId: string;
  part: 'domain' | 'volume';
  id: string;
  change: 'added' | 'verified' | 'removed';
  /** What the frame's event tells. */
  detail: object;
  /** The audit entry's `before` for a removal, its `after` otherwise. */
  state: object;
}

/** The frame's event (`<part>_<change>`) and the audit entry (`frame.<part>_<change>`) of a
 *  change to a part of the frame: domains and volumes record their changes the same way. */
export async function recordPartChange(q: Queryable, actor: Actor, at: Date, c: PartChange) {
  const type = `${c.part}_${c.change}`;
  await recordFrameEvent(q, c.frameId, at, { type, actorId: actor.userId, detail: c.detail });
  await recordAudit(q, actor, at, {
    projectId: c.projectId,
    action: `frame.${type}`,
    targetType: c.part,
    targetId: c.id,
    ...(c.change === 'removed' ? { before: c.state } : { after: c.state }),
  });
}

/** The frame's derived status when it differs from the one recorded (`last_status`). */
export function statusChange(
  f: FrameWithFacts,
): { status: FrameStatus; reason: StatusReason; from: string | null } | undefined {
  const { status, reason } = frameStatus(factsOf(f));
  return status === f.last_status && reason === f.last_status_reason
    ? undefined
    : { status, reason, from: f.last_status };
}

/** A status change as a `status` event (the caller writes `last_status`). */
export const statusEvent = (change: NonNullable<ReturnType<typeof statusChange>>) => ({
  type: 'status',
  status: change.status,
  reason: change.reason,
  detail: { from: change.from },
});

/** Re-derives the status of these frames and records each change as a `status` event. */
export async function refreshStatus(q: Queryable, frameIds: string[], at: Date) {
  if (frameIds.length === 0) return;
  for (const f of await framesWithFactsByIds(q, frameIds)) {
    const change = statusChange(f);
    if (!change) continue;
    await setLastStatus(q, f.id, change.status, change.reason);
    await recordFrameEvent(q, f.id, at, statusEvent(change));
  }
}

/** Wakes the long-polling syncs of these agents once the transaction commits. */
export async function notifyAgents(q: Queryable, agentIds: Array<string | null>) {
  for (const id of new Set(agentIds.filter((x): x is string => !!x))) {
    await notifyAgent(q, id);
  }
}
