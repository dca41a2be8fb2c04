// Frame history: operations (who stopped, started, deployed, changed what) and status changes.
// Every change calls refreshStatus() inside its transaction; when the derived status moved, a
// status event is recorded and listeners (event streams) are told on commit.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { newIdAfter } from '../ids.ts';
import { frameStatus } from './frame-status.ts';
import { factsOf } from './frame-view.ts';
import { framesWithFacts } from './frames-dal.ts';

export async function recordFrameEvent(q: Queryable, frameId: string, at: Date, e: {
  type: string; actorId?: string | null; detail?: unknown; status?: string | null; reason?: string | null;
}) {
  // Event ids are the positions of event streams (Last-Event-ID), so for one frame they must grow
  // in commit order, also when several instances write. The frame's row lock orders the writers
  // (callers usually hold it already); under it, the new id sorts after the frame's newest event.
  await sql`select 1 from frames where id = ${frameId} for no key update`.execute(q);
  const newest = await q.selectFrom('frame_events').select('id').where('frame_id', '=', frameId)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  await q.insertInto('frame_events').values({
    id: newIdAfter('event', at, newest?.id), frame_id: frameId, type: e.type, status: e.status ?? null,
    status_reason: e.reason ?? null, detail: e.detail === undefined ? null : JSON.stringify(e.detail), actor_id: e.actorId ?? null, at,
  }).execute();
  await sql`select pg_notify('frameplane_frame_events', ${frameId})`.execute(q);
}

/** Re-derives the status of these frames and records each change as a `status` event. */
export async function refreshStatus(q: Queryable, frameIds: string[], at: Date) {
  if (frameIds.length === 0) return;
  const rows = await framesWithFacts(q).where('f.id', 'in', frameIds).execute();
  for (const f of rows) {
    const { status, reason } = frameStatus(factsOf(f));
    if (status === f.last_status && reason === f.last_status_reason) continue;
    await q.updateTable('frames').set({ last_status: status, last_status_reason: reason }).where('id', '=', f.id).execute();
    await recordFrameEvent(q, f.id, at, { type: 'status', status, reason, detail: { from: f.last_status } });
  }
}

/** Wakes the long-polling syncs of these agents once the transaction commits. */
export async function notifyAgents(q: Queryable, agentIds: Array<string | null>) {
  for (const id of new Set(agentIds.filter((x): x is string => !!x))) {
    await sql`select pg_notify('frameplane_agent', ${id})`.execute(q);
  }
}
