// Issue 38: the log as a person reads it on a terminal (pretty lines), and as a collector reads
// it from a pipe (JSON lines). The terminal is a real pseudo-terminal: util-linux's `script`.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { freePort } from '../helpers/smtp.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';
import { logFormat } from '../../src/logger.ts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe('logFormat', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('%s on a terminal=%s is %s', (setting, tty, format) => {
    expect(logFormat(setting, tty)).toBe(format);
  });
});

/** The service started by `npm start`'s script, on a terminal or on a pipe. */
async function start(onTerminal: boolean) {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    CLOUD_AGENT: 'none',
    DATABASE_URL: await freshDatabaseUrl(),
    SECRET_KEY: 'log-format-test-secret-key',
    LOG_LEVEL: 'info',
    LOG_FORMAT: '',
  };
  const node = `${process.execPath} scripts/start.mjs`;
  const child = onTerminal
    ? spawn('script', ['-qfec', node, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['scripts/start.mjs'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'the service to be ready',
    () =>
      fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    {
      timeoutMs: 30_000,
      everyMs: 100,
      context: () => out,
    },
  );
  return { base, out: () => out.replace(/\r\n/g, '\n') };
}

/** A sign-up, whose verification e-mail is kept (no SMTP_URL) and printed to the log. */
async function signUp(base: string) {
  const r = await fetch(`${base}/v2/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'tty@example.com', password: 'a-long-password' }),
  });
  expect(r.status).toBe(201);
}

describe('the log of a started service', { timeout: 90_000 }, () => {
  it('on a terminal: pretty lines, the kept e-mail link alone on its line', async () => {
    const s = await start(true);
    await signUp(s.base);
    const link = /^\s*http:\/\/127\.0\.0\.1:\d+\/verify-email#token=[\w%-]+\s*$/m;
    await waitFor('the kept e-mail in the log', () => link.test(s.out()), { context: s.out });
    const plain = stripVTControlCharacters(s.out());
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: e-mail kept, not sent \(no SMTP_URL\)$/m);
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: POST \/v2\/auth\/signup 201 \d+ ms$/m);
    expect(plain).not.toMatch(/^\{"level"/m);
  });

  it('on a pipe: JSON lines', async () => {
    const s = await start(false);
    await signUp(s.base);
    await waitFor('the kept e-mail in the log', () => s.out().includes('e-mail kept'));
    const lines = s.out().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
