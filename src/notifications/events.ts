// The events an endpoint may choose, what a frame's own event means among them, and the body a
// receiver gets. Pure: notify.ts writes what these decide.

export const NOTIFICATION_EVENTS = [
  'deploy.started',
  'deploy.succeeded',
  'deploy.failed',
  'frame.online',
  'frame.error',
  'frame.backoff_tripped',
  'frame.suspended',
  'domain.verified',
  'member.added',
  'member.removed',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
/** What a test delivery (POST …/test) sends; no endpoint subscribes to it. */
export type SentEvent = NotificationEvent | 'ping';

/** The statuses that are told, each as its own event; the others (Starting, Degraded,
 *  Stopped) change too often, or on request, to be worth a message. */
const STATUS_EVENTS: Record<string, NotificationEvent> = {
  Online: 'frame.online',
  Error: 'frame.error',
  Suspended: 'frame.suspended',
};

/** A frame event as frames/frame-events.ts records it. */
export interface FrameEventFacts {
  type: string;
  status?: string | null;
}

/**
 * The notification a frame event is, if any: a change of status to Online, Error or
 * Suspended, a back-off trip, a verified domain. Deployments tell of themselves (deployments/).
 */
export function notificationOf(e: FrameEventFacts): NotificationEvent | undefined {
  if (e.type === 'status') return e.status ? STATUS_EVENTS[e.status] : undefined;
  if (e.type === 'backoff_tripped') return 'frame.backoff_tripped';
  if (e.type === 'domain_verified') return 'domain.verified';
  return undefined;
}

export interface EventBody {
  id: string;
  type: SentEvent;
  created_at: string;
  project: { id: string; name: string };
  data: Record<string, unknown>;
}

/** The body of every format but Slack's: the event itself. */
export const eventBody = (e: EventBody): EventBody => ({
  id: e.id,
  type: e.type,
  created_at: e.created_at,
  project: { id: e.project.id, name: e.project.name },
  data: e.data,
});

// Slack reads &, < and > as its own markup (links, mentions): names are shown as written.
const slackEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

type Named = { name?: unknown; id?: unknown } | undefined;
const nameOf = (x: Named) => String(x?.name ?? x?.id ?? '?');

/** What the sentences read of an event's data (notify.ts writes it). */
interface Said {
  frame?: Named;
  deployment?: {
    trigger?: string;
    commit_sha?: string | null;
    failure_reason?: string | null;
    failure_message?: string | null;
  };
  reason?: string | null;
  domain?: { hostname?: string | null };
  user?: { name?: string; email?: string };
  via?: { kind?: string; name?: string };
}

/** One readable sentence for a chat channel. */
export function sentence(e: EventBody): string {
  const d = e.data as Said;
  const project = nameOf(e.project);
  const frame = `${nameOf(d.frame)} (${project})`;
  const dep = d.deployment ?? {};
  const commit = typeof dep.commit_sha === 'string' ? `, commit ${dep.commit_sha.slice(0, 7)}` : '';
  const member = `${nameOf(d.user)}${d.user?.email ? ` <${d.user.email}>` : ''}`;
  const via = `${d.via?.kind === 'org' ? 'organization' : 'team'} ${nameOf(d.via)}`;
  switch (e.type) {
    case 'deploy.started':
      return `Deploy of ${frame} started (${dep.trigger ?? 'manual'}${commit}).`;
    case 'deploy.succeeded':
      return `Deploy of ${frame} succeeded${commit}.`;
    case 'deploy.failed':
      return `Deploy of ${frame} failed: ${dep.failure_reason ?? 'unknown'}${
        dep.failure_message ? ` (${String(dep.failure_message).slice(0, 200)})` : ''
      }.`;
    case 'frame.online':
      return `${frame} is Online.`;
    case 'frame.error':
      return `${frame} is in Error: ${d.reason ?? 'unknown'}.`;
    case 'frame.backoff_tripped':
      return `${frame} was stopped: it kept failing (back-off tripped). Deploy or start it again.`;
    case 'frame.suspended':
      return `${frame} is Suspended: the bill is past due.`;
    case 'domain.verified':
      return `${nameOf({ name: d.domain?.hostname })} is verified and routes to ${frame}.`;
    case 'member.added':
      return `${member} joined ${via}, which reaches ${project}.`;
    case 'member.removed':
      return `${member} left ${via}, which reaches ${project}.`;
    case 'ping':
      return `Test notification from Frameplane for ${project}: this endpoint is reachable.`;
  }
}

/** The bytes sent: the event as JSON, or Slack's `{text}` with the sentence. */
export function renderBody(e: EventBody, format: 'json' | 'slack'): string {
  if (format === 'slack') return JSON.stringify({ text: slackEscape(sentence(e)) });
  return JSON.stringify(eventBody(e));
}
