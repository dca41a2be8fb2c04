// What a frame's event says happened, in words: "replica 1 crashed (exit 1)", "deploy of
// 3f2a1c4 started (push)". One pure function of the event as the API answers it (type, status,
// detail: src/history, src/frames/frame-events.ts and the areas that record events); an event
// of a kind it does not know is shown by its type. The CLI prints it, the console shows it.
import type { Schemas } from './index.ts';

type Event = Pick<Schemas['FrameEvent'], 'type' | 'status' | 'status_reason' | 'detail'>;
type Detail = Record<string, unknown>;

/** A status reason, or a deployment's failure, in words: one table for the CLI and the console
 *  (which capitalizes it). */
const REASONS: Record<string, string> = {
  crash: 'crashed',
  oom: 'out of memory',
  health_check_failed: 'health check failed',
  start_timeout: 'no health check answered in time',
  image_pull_failed: 'image pull failed',
  port_in_use: 'port in use',
  build_failed: 'build failed',
  clone_failed: 'clone failed',
  backoff_tripped: 'crashed too often',
  billing_past_due: 'billing past due',
  stopping: 'stopping',
};

/** A reason code in words; one not known yet with spaces for underscores. */
export const reasonWords = (code: string) => REASONS[code] ?? words(code);

/** A frame's status in words: "Stopping…" while a stopped frame's replicas wind down. */
export function statusText(status: string, reason: string | null | undefined): string {
  if (status === 'Stopped' && reason === 'stopping') return 'Stopping…';
  return reason ? `${status} (${reasonWords(reason)})` : status;
}

const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
/** "branch_deleted" → "branch deleted". */
const words = (v: unknown) => text(v).replaceAll('_', ' ');
const short = (sha: unknown) => text(sha).slice(0, 7);
const list = (v: unknown) => (Array.isArray(v) ? v.map(text).filter(Boolean) : []);
/** " (a, b)" of the parts that are there, or nothing. */
const aside = (...parts: Array<string | false | undefined>) => {
  const shown = parts.filter(Boolean);
  return shown.length ? ` (${shown.join(', ')})` : '';
};

function replica(d: Detail): string {
  const how = d.signal
    ? `signal ${text(d.signal)}`
    : d.exit_code !== undefined && d.exit_code !== null && `exit ${text(d.exit_code)}`;
  const which = `replica ${text(d.replica)}`;
  if (d.state === 'crashed') return `${which} crashed${aside(how)}`;
  if (d.state === 'oom') return `${which} ran out of memory${aside(how)}`;
  if (d.state === 'unhealthy')
    return d.reason === 'start_timeout'
      ? `${which} did not pass its health check in time`
      : `${which} failed its health check`;
  return `${which} ${text(d.state)}`;
}

function deploy(d: Detail, verbose: boolean): string {
  const what = d.commit_sha ? `deploy of ${short(d.commit_sha)}` : 'deploy';
  const trigger = d.trigger === 'rollback' ? 'a rollback' : text(d.trigger);
  return `${what} started${aside(trigger, verbose && text(d.deployment_id))}`;
}

function backoff(d: Detail): string {
  if (d.cause === 'image_pull_timeout') return 'stopped: the image pull took too long';
  const streak = d.crash_streak ? `${text(d.crash_streak)} crashes in a row` : 'crashes';
  return `stopped after ${streak}; start it again once fixed`;
}

function env(d: Detail): string {
  const set = list(d.set);
  const deleted = list(d.deleted);
  const parts = [
    set.length && `set ${set.join(', ')}`,
    deleted.length && `removed ${deleted.join(', ')}`,
  ];
  return `env changed${aside(...parts.map((p) => p || undefined))}`;
}

function volume(d: Detail, change: string): string {
  const where = d.mount_path ? ` at ${text(d.mount_path)}` : '';
  const size = d.size_gb ? `, ${text(d.size_gb)} GB` : '';
  return `volume ${text(d.name)}${where}${size} ${change}`;
}

/** The event in words; ids (a deployment's) only when `verbose`. */
export function eventText(e: Event, verbose = false): string {
  const d = (e.detail && typeof e.detail === 'object' ? e.detail : {}) as Detail;
  const again = d.noop === true;
  switch (e.type) {
    case 'created':
      return d.preview_of ? `created as the preview of branch ${text(d.branch)}` : 'created';
    case 'updated': {
      const fields = Object.keys(d).map(words);
      return fields.length ? `settings changed: ${fields.join(', ')}` : 'settings saved, unchanged';
    }
    case 'start':
      return again ? 'start asked (it was running already)' : 'start asked';
    case 'stop':
      return again ? 'stop asked (it was stopped already)' : 'stop asked';
    case 'deploy':
      return deploy(d, verbose);
    case 'status': {
      // `from` is the status alone: Stopped (stopping) to Stopped reads "Stopped", not twice.
      const from = d.from && d.from !== e.status ? `${text(d.from)} → ` : '';
      return `${from}${statusText(e.status ?? '?', e.status_reason)}`;
    }
    case 'replica':
      return replica(d);
    case 'build_failed': {
      const message = text(d.message) && `: ${text(d.message)}`;
      return `build${d.commit_sha ? ` of ${short(d.commit_sha)}` : ''} failed${message}`;
    }
    case 'backoff_tripped':
      return backoff(d);
    case 'push_skipped':
      return `push of ${short(d.commit_sha)} not deployed: push deploys are paused`;
    case 'preview_created':
      return `preview of branch ${text(d.branch)} created`;
    case 'preview_deleted':
      return `preview of branch ${text(d.branch)} removed${aside(words(d.reason))}`;
    case 'env_changed':
      return env(d);
    case 'suspended':
      return 'suspended: billing is past due';
    case 'restored':
      return 'restored: billing is settled';
    case 'domain_added':
    case 'domain_verified':
    case 'domain_removed':
      return `domain ${text(d.hostname)} ${e.type.slice('domain_'.length)}`;
    case 'domain_released':
      return `domain ${text(d.hostname)} released: another frame verified it`;
    case 'volume_added':
      return volume(d, 'added');
    case 'volume_removed':
      return volume(d, 'removed');
    default:
      return e.type;
  }
}
