// Issue 12, item 12: a 413 for a body too large must reach a client that is still uploading.
// The service answers before reading the body and closes the connection; closing at once made
// the client's next writes hit a reset (EPIPE / ECONNRESET), which can destroy the answer it
// had not read yet. With a lingering close the client reads the 413, keeps writing without
// error, and then sees the server's orderly end of the connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { startInstance, type Instance } from '../faults/helpers/service.ts';

// The service as a process of its own, as people run it: in-process (app.inject or a listener in
// the test's own process) the client's writes and the server's close interleave differently.
let service: Instance;
let port: number;
beforeAll(async () => {
  service = await startInstance('lingering', { DATABASE_URL: await freshDatabaseUrl() });
  port = service.port;
}, 60_000);
afterAll(async () => {
  await service?.kill('SIGTERM');
});

/** Uploads a 5 MB body in chunks, going on for a while after the answer came; says what the client saw. */
function upload(): Promise<{ answer: string; errors: string[]; ended: boolean }> {
  return new Promise((resolve) => {
    // Half-open allowed: like a client still uploading, it keeps writing after the server's FIN.
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let answer = '';
    let ended = false;
    const errors: string[] = [];
    s.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
    s.on('end', () => {
      ended = true;
    });
    s.on('data', (d) => {
      answer += d;
    });
    s.write(
      `POST /v2/auth/signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n`,
    );
    s.write(chunk);
    let sent = 0;
    const more = setInterval(() => {
      if (s.destroyed || sent++ >= 20) {
        clearInterval(more);
        s.end();
        setTimeout(() => {
          s.destroy();
          resolve({ answer, errors, ended });
        }, 200);
        return;
      }
      s.write(chunk, (err) => {
        if (err) errors.push((err as NodeJS.ErrnoException).code ?? err.message);
      });
    }, 10);
  });
}

describe('a body too large', () => {
  it('gets its 413 and a clean end of the connection, never a reset, while the client is still sending', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await upload();
      expect(r.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.answer).toContain('"code":"body_too_large"');
      expect(r.errors).toEqual([]);
      expect(r.ended).toBe(true);
    }
  });
});
