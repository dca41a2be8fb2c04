// Where events become deliveries, in the transaction of the change they tell of (the caller's
// `q`): nothing is lost once the change commits, nothing is sent for one rolled back. Each
// call finds the enabled endpoints that want the event (one statement; none is the usual case)
// and writes one delivery per endpoint with the job that sends it. Called from the places the
// events happen: frames/frame-events.ts (status, back-off, domains), deployments/deployments.ts
// and the membership changes of teams/ and orgs/.
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import {
  eventBody,
  type FrameEventFacts,
  type NotificationEvent,
  notificationOf,
} from './events.ts';
import {
  endpointsForFrame,
  endpointsForTeam,
  type NewDelivery,
  queueDeliveries,
  teamAndUser,
} from './notify-dal.ts';

interface Target {
  endpoint_id: string;
  project_id: string;
  project_name: string;
}

/** One delivery per endpoint of one event (one event id for all of them). */
async function queue(
  q: Queryable,
  at: Date,
  type: NotificationEvent,
  targets: Target[],
  dataOf: (t: Target) => Record<string, unknown>,
) {
  if (targets.length === 0) return;
  const eventId = newId('notification_event', at);
  const rows: NewDelivery[] = targets.map((t) => ({
    id: newId('notification_delivery', at),
    endpoint_id: t.endpoint_id,
    event_id: eventId,
    event_type: type,
    body: JSON.stringify(
      eventBody({
        id: eventId,
        type,
        created_at: iso(at),
        project: { id: t.project_id, name: t.project_name },
        data: dataOf(t),
      }),
    ),
    manual: false,
    redelivery_of: null,
    next_attempt_at: at,
    created_at: at,
  }));
  await queueDeliveries(q, rows);
}

/** An event of a frame: `data` gets the frame (id, name, space, the frame it previews). */
export async function notifyOfFrame(
  q: Queryable,
  frameId: string,
  at: Date,
  type: NotificationEvent,
  data: Record<string, unknown>,
) {
  const targets = await endpointsForFrame(q, frameId, type);
  const frame = targets[0] && {
    id: frameId,
    name: targets[0].frame_name,
    space_id: targets[0].space_id,
    preview_of: targets[0].preview_of,
  };
  await queue(q, at, type, targets, () => ({ frame, ...data }));
}

/** The frame event just recorded, when it is one an endpoint may want (events.ts). */
export async function notifyFrameEvent(
  q: Queryable,
  frameId: string,
  at: Date,
  e: FrameEventFacts & { reason?: string | null; detail?: unknown },
) {
  const type = notificationOf(e);
  if (!type) return;
  const detail = (e.detail ?? {}) as Record<string, unknown>;
  const data =
    type === 'domain.verified'
      ? { domain: { id: detail.domain_id ?? null, hostname: detail.hostname ?? null } }
      : type === 'frame.backoff_tripped'
        ? { reason: 'backoff_tripped', detail }
        : { status: e.status, reason: e.reason ?? null, previous_status: detail.from ?? null };
  await notifyOfFrame(q, frameId, at, type, data);
}

/** A deployment that started, succeeded or failed. */
export interface DeploymentFacts {
  id: string;
  frame_id: string;
  trigger: string;
  status: string;
  commit_sha: string | null;
  git_repository_branch: string;
  failure_reason: string | null;
  failure_message: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export function notifyOfDeployment(
  q: Queryable,
  at: Date,
  type: 'deploy.started' | 'deploy.succeeded' | 'deploy.failed',
  d: DeploymentFacts,
) {
  return notifyOfFrame(q, d.frame_id, at, type, {
    deployment: {
      id: d.id,
      trigger: d.trigger,
      status: d.status,
      branch: d.git_repository_branch,
      commit_sha: d.commit_sha,
      failure_reason: d.failure_reason,
      failure_message: d.failure_message,
      created_at: iso(d.created_at),
      finished_at: d.finished_at ? iso(d.finished_at) : null,
    },
  });
}

/**
 * A user joined or left a team (or org): told to the projects they reach through it. `role`
 * is their role in it (before they left, for a removal).
 */
export async function notifyOfMembership(
  q: Queryable,
  m: { teamId: string; userId: string; role: Role; change: 'added' | 'removed'; at: Date },
) {
  const type = m.change === 'added' ? 'member.added' : 'member.removed';
  const targets = await endpointsForTeam(q, m.teamId, m.role, type);
  if (targets.length === 0) return;
  const who = await teamAndUser(q, m.teamId, m.userId);
  if (!who) return;
  await queue(q, m.at, type, targets, () => ({
    user: { id: m.userId, name: who.user_name, email: who.email },
    via: { kind: who.kind, id: m.teamId, name: who.team_name, role: m.role },
  }));
}
