// A container's output as lines, from the Engine API's log stream (timestamps on), resumable:
// the cursor is the timestamp of the last line delivered, so an adopting agent asks for what
// came since and skips what it already sent.
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { lines } from '../../lines.ts';

/** Nanoseconds since the epoch of an RFC 3339 timestamp with up to 9 fractional digits. */
export function nanosOf(ts: string): bigint {
  const m = /^(.*?T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) return 0n;
  const seconds = BigInt(Math.floor(Date.parse(`${m[1]}${m[3]}`) / 1000));
  return seconds * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** `since` of the logs call: whole seconds are what the API takes, the rest is skipped here. */
const sinceOf = (cursor: string) => (cursor ? Number(nanosOf(cursor) / 1_000_000_000n) : 0);

export interface LogFollower {
  cursor(): string;
  stop(): void;
}

export async function followLogs(
  docker: Docker,
  container: Docker.Container,
  from: string,
  onLine: (l: string) => void,
): Promise<LogFollower> {
  let cursor = from;
  const after = from ? nanosOf(from) : -1n;
  const options = {
    follow: true,
    stdout: true,
    stderr: true,
    timestamps: true,
    since: sinceOf(from),
  } as const;
  const stream = (await container.logs(options)) as NodeJS.ReadableStream;
  const out = new PassThrough();
  docker.modem.demuxStream(stream, out, out);
  stream.on('end', () => out.end());
  stream.on('error', () => out.end());
  lines(out, (raw) => {
    const space = raw.indexOf(' ');
    const ts = space > 0 ? raw.slice(0, space) : '';
    if (ts && nanosOf(ts) <= after) return; // sent by the agent before this one
    if (ts) cursor = ts;
    onLine(space > 0 ? raw.slice(space + 1) : raw);
  });
  return {
    cursor: () => cursor,
    stop: () => {
      (stream as unknown as { destroy?: () => void }).destroy?.();
    },
  };
}
