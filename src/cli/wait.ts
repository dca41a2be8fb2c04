// --wait: follows a frame until an operation reaches its final status. The events stream wakes
// the loop at once; the frame itself is read after every wake-up (and every 2 s without one),
// so an event missed before the stream opened cannot leave the wait hanging.
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { statusText } from '../sdk/event-text.ts';
import { followLines } from './follow-lines.ts';
import { paint, statusColour } from './output.ts';

type Frame = Schemas['Frame'];
/** `ok` or `failed` once the frame says how the operation ended; undefined while it runs.
 *  `logsSince`: the operation's log lines (a build's) are worth showing from then on. */
export type Verdict = ((frame: Frame) => 'ok' | 'failed' | undefined) & { logsSince?: string };

const FAILED = new Set(['Error', 'Stopped', 'Suspended']);

/** A deployment is done when the frame serves it Online; it failed if the frame gave up on it.
 *  Its log lines (the build's, then the app's) are shown from its start. */
export const deployed = (d: { id: string; created_at: string }): Verdict =>
  Object.assign(
    (f: Frame) => {
      const latest = f.latest_deployment;
      if (latest && latest.id !== d.id) return 'failed'; // another deployment superseded it
      if (latest && ['failed', 'canceled', 'superseded'].includes(latest.status)) return 'failed';
      if (FAILED.has(f.status)) return 'failed';
      return f.status === 'Online' && latest?.status === 'succeeded' ? 'ok' : undefined;
    },
    { logsSince: d.created_at },
  );

export const online: Verdict = (f) =>
  f.status === 'Online' ? 'ok' : FAILED.has(f.status) ? 'failed' : undefined;

/** Stopped, and its replicas too: a frame is Stopped as soon as asked, "stopping" until then. */
export const stopped: Verdict = (f) =>
  f.status === 'Stopped' && f.status_reason !== 'stopping'
    ? 'ok'
    : f.status === 'Error'
      ? 'failed'
      : undefined;

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Progress on stderr: one rewritten line on a terminal, one line per change otherwise. */
function progress() {
  const tty = process.stderr.isTTY === true;
  let last = '';
  let turn = 0;
  return {
    show(text: string) {
      if (tty) process.stderr.write(`\r\x1b[2K${SPINNER[turn++ % SPINNER.length]} ${text}`);
      else if (text !== last) process.stderr.write(`${text}\n`);
      last = text;
    },
    /** A line printed above the progress, which stays the last line. */
    line(text: string) {
      if (!tty) return void process.stderr.write(`${text}\n`);
      process.stderr.write(`\r\x1b[2K${text}\n`);
      if (last) process.stderr.write(`${SPINNER[turn % SPINNER.length]} ${last}`);
    },
    end(text: string) {
      process.stderr.write(tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
    },
  };
}

export async function waitFor(
  fp: Frameplane,
  start: Frame,
  verdict: Verdict,
  timeoutMs: number,
  showLines = true,
): Promise<{ frame: Frame; result: 'ok' | 'failed' | 'timeout' }> {
  const abort = new AbortController();
  const events = fp.events(start, {}, abort.signal)[Symbol.asyncIterator]();
  // A stream that ended or failed stops waking the loop; the 2 s reads carry on alone.
  const never = new Promise<never>(() => {});
  const wake = () =>
    events.next().then(
      (r) => (r.done ? never : r),
      () => never,
    );
  let next: Promise<unknown> = wake();
  const deadline = Date.now() + timeoutMs;
  const bar = progress();
  // The operation's log lines as they come, until the verdict.
  const lines =
    verdict.logsSince && showLines
      ? followLines(fp, start, verdict.logsSince, (l) => bar.line(l))
      : undefined;
  const path = { project_id: start.project_id, space_id: start.space_id, frame_id: start.id };
  let frame = start;
  try {
    for (;;) {
      frame = await fp.call(
        fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', {
          params: { path },
        }),
      );
      const status = `${frame.name}: ${statusText(frame.status, frame.status_reason)}`;
      const result = verdict(frame);
      if (result) {
        await lines?.finish();
        bar.end(
          paint(status, result === 'ok' ? statusColour(frame.status) : 'red', process.stderr),
        );
        return { frame, result };
      }
      if (Date.now() >= deadline) {
        await lines?.finish();
        bar.end(paint(`${status}: no final status within the timeout`, 'red', process.stderr));
        return { frame, result: 'timeout' };
      }
      bar.show(status);
      const woke = await Promise.race([next.then(() => true), sleep(2000).then(() => false)]);
      if (woke) next = wake();
    }
  } finally {
    abort.abort();
    void events.return?.(undefined);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
