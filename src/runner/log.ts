// Logging for the agent itself (pino, JSON lines on stdout like the service) and the tailing of
// replica output. Replicas write to files, not pipes: a pipe dies with the agent and the next
// write would kill the app with EPIPE, while a file lets a replica outlive its agent and be
// adopted by the next one, which resumes reading where the last one stopped.
import { closeSync, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs';
import pino from 'pino';

export type AgentLog = pino.Logger;

export function agentLogger(level = process.env.LOG_LEVEL || 'info'): AgentLog {
  // Written synchronously. pino's default (asynchronous) destination flushes on exit, and that
  // flush retries a write to a closed pipe for ever: an agent whose service was killed (its
  // stdout the service's pipe) then never exits. Synchronously, the first write that meets the
  // closed pipe turns logging off (pino's EPIPE filter), and the agent exits.
  return pino(
    { level, base: { service: 'frameplane-agent' } },
    pino.destination({ dest: 1, sync: true }),
  );
}

/** Above this, a fully read log file is truncated (the replica writes with O_APPEND). */
const ROTATE_BYTES = 8 * 1024 * 1024;
const POLL_MS = 300;
const CHUNK = 64 * 1024;

export interface Tailer {
  /** Bytes of the file consumed so far, persisted so an adopting agent resumes there. */
  offset(): number;
  /** Stops reading; with `drain`, first reads what is left (else a later reader will). */
  stop(drain?: boolean): void;
}

/** Calls `onLine` for every complete line appended to `path` from `offset` on. */
export function tailFile(path: string, offset: number, onLine: (line: string) => void): Tailer {
  let position = offset;
  // Bytes after the last newline. Split on the byte 0x0a, which never occurs inside a UTF-8
  // sequence, so a character cut by a read boundary is never mangled.
  let partial = Buffer.alloc(0);
  let stopped = false;
  const emit = (bytes: Buffer) => onLine(bytes.toString('utf8').replace(/\r$/, ''));

  const drain = () => {
    let fd: number;
    try {
      fd = openSync(path, 'r+');
    } catch {
      return;
    } // not created yet, or removed
    try {
      if (fstatSync(fd).size < position) {
        position = 0;
        partial = Buffer.alloc(0);
      } // truncated meanwhile
      const buf = Buffer.alloc(CHUNK);
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, position);
        if (n <= 0) break;
        position += n;
        let data = Buffer.concat([partial, buf.subarray(0, n)]);
        for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a)) {
          emit(data.subarray(0, nl));
          data = data.subarray(nl + 1);
        }
        partial = Buffer.from(data);
        if (partial.length > CHUNK) {
          emit(partial);
          partial = Buffer.alloc(0);
        } // a line without end
      }
      if (position > ROTATE_BYTES && partial.length === 0) {
        // Everything is read: start the file over. A line written in between is the price.
        ftruncateSync(fd, 0);
        position = 0;
      }
    } catch {
      // unreadable for a moment; the next poll retries
    } finally {
      closeSync(fd);
    }
  };

  const timer = setInterval(drain, POLL_MS);
  timer.unref();
  return {
    offset: () => position - partial.length,
    stop(final = true) {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (!final) return;
      drain();
      if (partial.length) emit(partial);
      partial = Buffer.alloc(0);
    },
  };
}
