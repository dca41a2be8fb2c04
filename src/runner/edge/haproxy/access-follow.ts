// Reads HAProxy's access lines (access-log.ts) from a named pipe of the agent's edge directory,
// which HAProxy writes to as its log (`log fd@3`: one write per line, never blocking: a line that
// finds the pipe full is dropped and counted by HAProxy as DroppedLogs). The agent reads the
// pipe every 20 ms, everything in it at once, without waiting on it in between: HAProxy's
// writes wake no reader. Measured against a pipe read as lines came (HAProxy's stdout) and a
// ring followed on the admin socket, this is the cheapest for both processes (docs/api.md).
// The pipe holds 64 KiB, about 1,000 lines: 50,000 a second before any is dropped.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync, rmSync } from 'node:fs';
import { lineSplitter } from './access-log.ts';

const READ_EVERY_MS = 20;

export interface AccessPipe {
  /** The descriptor to give HAProxy (as its fd 3). */
  readonly fd: number;
  close(): void;
}

/** Makes the pipe at `path` (replacing what is there) and reads it until closed. */
export function openAccessPipe(path: string, onLine: (line: string) => void): AccessPipe {
  rmSync(path, { force: true });
  execFileSync('mkfifo', ['-m', '600', path]);
  // Read and write: opening does not wait for a writer, and reading never meets an end.
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  const split = lineSplitter(onLine);
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const drain = () => {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch {
        return; // EAGAIN: empty
      }
      if (n <= 0) return;
      split(buffer.toString('latin1', 0, n));
      if (n < buffer.length) return;
    }
  };
  const timer = setInterval(drain, READ_EVERY_MS);
  timer.unref();
  let closed = false;
  return {
    fd,
    close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      drain();
      closeSync(fd);
      rmSync(path, { force: true });
    },
  };
}
