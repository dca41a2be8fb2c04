// The edge's own lines in a frame's log (source `edge`), as Heroku's router writes its errors:
// one line per answer the edge made itself instead of the app (a 502, 503 or 504 page: no
// replica ready, the frame stopped, a replica that refused the connection, closed it or did
// not answer in time), with the method, the path, the status and the time. Never a line per
// request the app answered. A frame the edge fails for many requests at once (a stopped frame
// under traffic) gets at most MAX_LINES lines a minute, then one saying how many more failed.
const MAX_LINES = 30;
const WINDOW_MS = 60_000;
const MAX_PATH = 200;

export interface EdgeFailure {
  status: number;
  /** Why the edge answered itself. */
  desc: string;
  method: string;
  path: string;
  ms: number;
}

/** One line, `key=value` as Heroku's router writes them; the path cut and quoted. */
export function edgeLine(f: EdgeFailure): string {
  const cut = f.path.length > MAX_PATH ? `${f.path.slice(0, MAX_PATH)}…` : f.path;
  const path = JSON.stringify(cut);
  const time = Number.isFinite(f.ms) ? `${Math.round(f.ms)}ms` : '-';
  return (
    `at=error status=${f.status} desc="${f.desc}" method=${f.method.slice(0, 20)} ` +
    `path=${path} service=${time}`
  );
}

/** Why the built-in plane answered a page: the edge page, or undici's error code. */
export function pageDesc(page: string): string {
  if (page === 'starting') return 'no replica is ready';
  if (page === 'stopped') return 'the frame is stopped';
  if (page === 'suspended') return 'the frame is suspended';
  return page;
}

export function upstreamDesc(code: string): string {
  if (code === 'ECONNREFUSED' || code === 'ENOENT') return 'the replica refused the connection';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connecting to the replica timed out';
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return 'the replica did not answer in time';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE')
    return 'the replica closed the connection';
  return `the replica could not be reached (${code || 'unknown error'})`;
}

/**
 * Why HAProxy failed a request itself, from its termination state (%ts: who ended it, then in
 * which phase); undefined when it ended normally or the client ended it (the app's own answer).
 */
export function terminationDesc(ended: string): string | undefined {
  const [who, phase] = [ended[0], ended[1]];
  if (who === 'S' && phase === 'C') return 'the replica refused the connection';
  if (who === 's' && phase === 'C') return 'connecting to the replica timed out';
  if (who === 's') return 'the replica did not answer in time';
  if (who === 'S') return 'the replica closed the connection';
  if (who === 'P' || who === 'I' || who === 'R' || who === 'D')
    return `the edge could not pass the answer on (${ended})`;
  return undefined;
}

/** Lines per frame, bounded per minute (`now` in ms; Date.now unless told, for tests). */
export class EdgeLines {
  private frames = new Map<string, { since: number; lines: number; more: number }>();

  constructor(
    private send: (frameId: string, line: string) => void,
    private now: () => number = Date.now,
  ) {}

  failed(frameId: string, f: EdgeFailure) {
    const now = this.now();
    let w = this.frames.get(frameId);
    if (!w || now - w.since >= WINDOW_MS) {
      if (w?.more)
        this.send(frameId, `at=info desc="${w.more} more edge errors in the last minute"`);
      if (this.frames.size > 10_000) this.frames.clear(); // frames gone: a bound, never reached
      w = { since: now, lines: 0, more: 0 };
      this.frames.set(frameId, w);
    }
    if (w.lines >= MAX_LINES) {
      w.more++;
      return;
    }
    w.lines++;
    this.send(frameId, edgeLine(f));
  }
}
