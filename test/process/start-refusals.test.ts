// Issue 34: starts that must be refused, with real services as `npm start` runs them.
// Item 12: a second service on the same DATA_DIR used to stop the first one's PostgreSQL
// (src/db/embedded.ts, stopLeftover); it must exit, naming the process that holds the directory.
// Item 2: a DATA_DIR/secret.key that Frameplane did not write stops the start before serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, killAll, startInstance, SECRET_KEY } from '../faults/helpers/service.ts';
import { createServer } from 'node:net';
import { freePort } from '../helpers/smtp.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

let parent: string;
let dataDir: string;

beforeAll(() => {
  // As root the server runs as `postgres`, which must pass through DATA_DIR's parents.
  parent = mkdtempSync(join(tmpdir(), 'frameplane-refusals-'));
  chmodSync(parent, 0o711);
  dataDir = join(parent, 'data');
});
afterAll(() => {
  killAll();
  rmSync(parent, { recursive: true, force: true });
});

/** A start that should fail: its exit code (or 'still running' after 30 s) and its output. */
async function refusedStart(env: Record<string, string>) {
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      CLOUD_AGENT: 'none',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      SECRET_KEY,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Both streams in one log, and stderr alone: the two pipes interleave in no fixed order.
  let log = '';
  let stderr = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => {
    log += d;
    stderr += d;
  });
  const code = await new Promise<number | string>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running after 30 s');
    }, 30_000);
    child.once('exit', (c, signal) => {
      clearTimeout(timer);
      resolve(c ?? signal ?? 'unknown');
    });
  });
  return { code, log, stderr };
}

describe('starts that are refused', () => {
  it('a second service on the same DATA_DIR exits, naming the first, which keeps working', {
    timeout: 120_000,
  }, async () => {
    const first = await startInstance('first', { DATA_DIR: dataDir, DATABASE_URL: '' }, 60_000);
    const second = await refusedStart({});
    expect(second.code, second.log).toBe(1);
    expect(second.log).toContain(`is in use by another Frameplane, pid ${first.child.pid} (`);
    expect(second.log).toContain('scripts/start.mjs');
    expect(second.log).toContain('stop that one first, or give this one another DATA_DIR');
    expect(second.log).not.toContain('embedded PostgreSQL started');

    // The first one's database is untouched: a sign-up writes to it.
    const signup = await http(first.base, 'POST', '/v2/auth/signup', {
      body: { email: 'ann@example.test', password: 'a-long-password' },
    });
    expect(signup.status, signup.text).toBe(201);
    const me = await http(first.base, 'GET', '/v2/projects', { token: signup.json.access_token });
    expect(me.status, me.text).toBe(200);

    // Stopped, it lets the directory go.
    expect(await first.kill('SIGTERM')).toBe(0);
    expect(existsSync(join(dataDir, 'frameplane.pid'))).toBe(false);
  });

  it('a secret.key that Frameplane did not write stops the start before anything is served', {
    timeout: 60_000,
  }, async () => {
    // What the attack of item 2 left: a commit SHA written through a tenant's symlink.
    writeFileSync(join(dataDir, 'secret.key'), 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', {
      mode: 0o600,
    });
    const r = await refusedStart({ SECRET_KEY: '' });
    expect(r.code, r.log).toBe(1);
    expect(r.log).toContain('secret.key does not hold a key as Frameplane generates them');
    expect(r.log).not.toContain('Frameplane is ready');
    expect(existsSync(join(dataDir, 'frameplane.pid'))).toBe(false);
  });

  // Issue 38: what a person who mistyped a setting reads: one line, the setting named, no stack.
  const oneLine = (log: string) =>
    log
      .trim()
      .split('\n')
      .filter((l) => l.trim());

  it('a port in use: says which, and to set PORT', { timeout: 60_000 }, async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    try {
      const r = await refusedStart({ PORT: String(port), DATABASE_URL: await freshDatabaseUrl() });
      expect(r.code, r.log).toBe(1);
      expect(oneLine(r.log)).toEqual([
        `Frameplane did not start: port ${port} on 127.0.0.1 is in use by another program; set PORT to a free port`,
      ]);
    } finally {
      taken.close();
    }
  });

  it('a port in use after the embedded database started: that database is stopped too', {
    timeout: 90_000,
  }, async () => {
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    try {
      rmSync(join(dataDir, 'secret.key'), { force: true });
      const r = await refusedStart({ PORT: String(port) });
      expect(r.code, r.log).toBe(1);
      expect(oneLine(r.stderr).at(-1)).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(r.log).toContain('embedded PostgreSQL started');
      // A server shut down cleanly removes its pid file; one left running keeps it.
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
      expect(existsSync(join(dataDir, 'frameplane.pid'))).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('DATABASE_URL that is not a URL: names it and shows the form, not the value', {
    timeout: 60_000,
  }, async () => {
    const r = await refusedStart({ DATABASE_URL: 'not-a-url-with-s3cret' });
    expect(r.code, r.log).toBe(1);
    expect(oneLine(r.log)).toHaveLength(1);
    expect(r.log).toContain('Frameplane did not start: DATABASE_URL must be a postgres:// URL');
    expect(r.log).not.toContain('s3cret');
  });

  it('DATABASE_URL where nothing answers: names the host, not the password', {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const r = await refusedStart({ DATABASE_URL: `postgres://me:s3cret@127.0.0.1:${port}/app` });
    expect(r.code, r.log).toBe(1);
    // The service listens before it migrates, so stdout holds what it logged until then;
    // the reason is stderr's one line.
    expect(oneLine(r.stderr)).toEqual([
      `Frameplane did not start: DATABASE_URL: cannot connect to 127.0.0.1:${port}/app: nothing answers there (connection refused)`,
    ]);
    expect(oneLine(r.log).filter((l) => /^\s+at /.test(l) || l.includes('s3cret'))).toEqual([]);
  });
});
