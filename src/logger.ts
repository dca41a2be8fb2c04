// The service's log: JSON lines on standard output, one per request among them, or the same
// records pretty-printed for a person when standard output is a terminal (LOG_FORMAT).
// JSON is written asynchronously (pino's destination, sonic-boom): a line goes to the kernel as
// soon as the one before it has, so under load several lines share one write, and a reader that
// stops reading (a stuck log driver, a paused terminal) no longer stalls every request behind a
// blocking write: past 16 MiB waiting, lines are dropped rather than held. Lines still
// buffered are written when the process exits (pino flushes on exit); only a crash of the
// machine loses them. In the bench (log to /dev/null) the main thread's CPU per read fell
// (frame read 179 to 144 µs) but the ratios to the limit did not move: the writes moved to
// libuv's threads.
import pino from 'pino';
import pretty from 'pino-pretty';
import { logSerializers } from './http/log-redaction.ts';

const MAX_WAITING_BYTES = 16 * 2 ** 20;

export type LogFormat = 'json' | 'pretty';

/** `auto` is pretty on a terminal, JSON for anything that collects lines (a pipe, a file). */
export function logFormat(setting: 'auto' | LogFormat, isTty: boolean): LogFormat {
  if (setting !== 'auto') return setting;
  return isTty ? 'pretty' : 'json';
}

/** The access log's line (http/access-log.ts) as people write it; other records' message. */
function message(record: Record<string, unknown>, key: string) {
  const { method, url, status, ms } = record;
  if (record[key] === 'request' && method && url) return `${method} ${url} ${status} ${ms} ms`;
  return `${record[key]}`;
}

/**
 * The pretty form: time, level, message, then the record's fields. A request is one line (its
 * fields method, url, status and ms, which no other record uses, go into the message). A kept
 * e-mail's text (an array of lines, see mail/deliver.ts) is printed one line each, so its link
 * stands alone on its line, whole, for a terminal to make clickable.
 */
export function prettyStream(dest: number | NodeJS.WritableStream = 1, colorize = true) {
  return pretty({
    destination: dest as number,
    sync: true,
    colorize,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service,method,url,status,ms',
    messageFormat: message,
    customPrettifiers: {
      text: (value) =>
        Array.isArray(value) ? `\n${value.map((line) => `      ${line}`).join('\n')}` : `${value}`,
    },
  });
}

export function createLogger(level: string, format: LogFormat = 'json') {
  const options = { level, base: { service: 'frameplane' }, serializers: logSerializers };
  if (format === 'pretty') return pino(options, prettyStream());
  return pino(options, pino.destination({ dest: 1, sync: false, maxLength: MAX_WAITING_BYTES }));
}
