// The real process, as `npm start` runs it: two instances migrating one fresh database at once,
// health endpoints, and a clean exit on SIGTERM.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { freshDatabaseUrl } from './helpers/database.ts';
import { waitFor } from './helpers/wait.ts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function startInstance(databaseUrl: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      CLOUD_AGENT: 'none',
      SECRET_KEY: 'k',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let log = '';
  child.stdout!.on('data', (d) => {
    log += d;
  });
  child.stderr!.on('data', (d) => {
    log += d;
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'the instance to answer 200 on /readyz',
    async () => {
      if (child.exitCode !== null) throw new Error(`instance exited (${child.exitCode}):\n${log}`);
      return fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 'not up yet',
      );
    },
    { until: (status) => status === 200, timeoutMs: 30_000, everyMs: 100, context: () => log },
  );
  return { child, base, log: () => log };
}

describe('service lifecycle', () => {
  it('two instances start on one empty database at once; migrations apply once; SIGTERM exits 0', async () => {
    const url = await freshDatabaseUrl();
    // An empty database: drop everything the template gave us, so both instances migrate it.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(
      'drop schema public cascade; create schema public; drop schema graphile_worker cascade',
    );
    const [a, b] = await Promise.all([startInstance(url), startInstance(url)]);
    const { rows } = await c.query('select name from schema_migrations');
    expect(rows.length).toBeGreaterThan(0);
    await c.end();

    expect((await fetch(`${a.base}/healthz`)).status).toBe(200);
    const signup = await fetch(`${a.base}/v2/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'life@example.test', password: 'long-enough-pw' }),
    });
    expect(signup.status).toBe(201);
    const { access_token } = await signup.json();
    // The token works on the other instance: state is in the shared database.
    expect(
      (await fetch(`${b.base}/v2/user`, { headers: { authorization: `Bearer ${access_token}` } }))
        .status,
    ).toBe(200);

    for (const inst of [a, b]) {
      const exited = new Promise<number | null>((r) => inst.child.once('exit', (code) => r(code)));
      inst.child.kill('SIGTERM');
      expect(await exited, inst.log()).toBe(0);
    }
  }, 60_000);
});
