// What the HAProxy plane answered, per request: HAProxy writes one short line per request to a
// pipe the agent reads (config.ts: `log fd@3`, LOG_FORMAT; access-follow.ts). This parses a line
// and says which frame it was for (request-meter.ts). Pure.

/** Marks the access lines among what else HAProxy writes (its own notices and warnings). */
export const LOG_MARK = 'fp1';
/**
 * The backend (a frame's slot, a page's, or the frontend's own name when it answered itself),
 * the status sent (-1: none), the total active time in ms (%Ta: from the request's first byte to
 * the answer's last, idle time on a kept-alive connection excluded), how the session ended (%ts:
 * `--` when normally; else who ended it, in which phase), the method and the path (for the
 * lines of the edge's failures, edge-lines.ts), and the table's key of the Host (var txn.host,
 * set by the frontend; `-` when unset), last: the one field with room for a space.
 */
export const LOG_FORMAT = `${LOG_MARK} %b %ST %Ta %ts %HM %HPO %[var(txn.host)]`;

export interface AccessLine {
  backend: string;
  status: number;
  /** NaN when HAProxy gave no time. */
  ms: number;
  /** HAProxy's termination state: two characters, `--` for a normal end. */
  ended: string;
  method: string;
  path: string;
  host?: string;
}

export function parseAccessLine(line: string): AccessLine | undefined {
  const parts = line.split(' ');
  if (parts[0] !== LOG_MARK || parts.length < 8) return undefined;
  const [, backend, status, ta, ended, method, path] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const ms = Number(ta);
  const host = parts.slice(7).join(' ');
  return {
    backend,
    status: Number(status),
    ms: Number.isFinite(ms) && ms >= 0 ? ms : Number.NaN,
    ended,
    method,
    path,
    ...(host && host !== '-' ? { host } : {}),
  };
}

const SLOT = /^slot_(\d+)$/;
/** config.ts's pageBackend('unknown_host') (config.ts imports this module). */
const UNKNOWN_HOST = 'page_unknown_host';
/** The frontends' names (config.ts): a request they answered themselves names one of them. */
const FRONTENDS = new Set(['http', 'https']);

/**
 * The frame a logged request was for: its slot's frame, else the frame holding its host (the
 * edge's pages for a stopped, suspended or starting frame, a body refused as too large). Not a
 * frame's: the ACME challenges, and the frontend's redirects to HTTPS (the built-in plane does
 * not count those either).
 */
export function frameOfLine(
  l: AccessLine,
  slotFrame: (slot: number) => string | undefined,
  hostFrame: (host: string) => string | undefined,
): string | undefined {
  const slot = SLOT.exec(l.backend);
  if (slot) return slotFrame(Number(slot[1]));
  // HAProxy did not know the host then (its map follows the table a moment later): no frame's.
  if (l.backend === 'acme' || l.backend === UNKNOWN_HOST) return undefined;
  if (FRONTENDS.has(l.backend) && l.status >= 300 && l.status < 400) return undefined;
  return l.host === undefined ? undefined : hostFrame(l.host);
}

/** Splits a stream's chunks into lines; a partial line waits for its end (bounded). */
export function lineSplitter(onLine: (line: string) => void, maxLine = 8192) {
  let rest = '';
  return (chunk: Buffer | string) => {
    const text = rest + chunk.toString();
    const lines = text.split('\n');
    rest = (lines.pop() ?? '').slice(-maxLine);
    for (const l of lines) onLine(l);
  };
}
