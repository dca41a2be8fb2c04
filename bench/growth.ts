// Repeats an attacker's cycle against the service in-process and prints its memory: save the
// largest env the service accepts, deploy, sync as the agent. Run:
//   node --expose-gc --import tsx bench/growth.ts [--cycles=35] [--src=../src]
// `--src` points at another copy of src/ (with migrations/ beside it), to measure an older
// version the same way. The bodies are sent through inject with a large body limit, so one PUT
// sets what an attacker would build with many PATCHes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CYCLES = Number(flag('cycles') ?? 35);
const SRC = pathToFileURL(resolve(flag('src') ?? new URL('../src', import.meta.url).pathname)).href;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const load = (path: string) => import(`${SRC}/${path}`);
const { startEmbeddedPostgres } = await load('db/embedded.ts');
const { createPgPool, createDatabase } = await load('db/database.ts');
const { migrate } = await load('db/migrate.ts');
const { loadConfig } = await load('config.ts');
const { systemClock } = await load('clock.ts');
const { sealer } = await load('secrets.ts');
const { createServices } = await load('services.ts');
const { buildApp } = await load('app.ts');

const dir = mkdtempSync(join(tmpdir(), 'frameplane-growth-'));
const pg = await startEmbeddedPostgres(dir);
const ADMIN = 'growth-admin-token';
const config = loadConfig({
  DATABASE_URL: pg.url,
  LOG_LEVEL: 'silent',
  ADMIN_TOKEN: ADMIN,
  DATA_DIR: dir,
  BODY_LIMIT_BYTES: String(32 * 1024 * 1024),
});
const pool = createPgPool(pg.url, 2);
await migrate(pool);
await pool.end();
const db = createDatabase(pg.url, { max: 10 });
const clock = systemClock(db, { testClock: config.testClock });
await clock.refresh();
const core = { config, db, clock, sealer: sealer('growth-secret-key') };
const services = createServices(core);
const app = await buildApp(core, services);

async function call(method: string, url: string, token: string, body?: unknown) {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    payload: body as object,
  });
  return {
    status: res.statusCode,
    json: res.body ? JSON.parse(res.body) : null,
    bytes: res.body.length,
  };
}
function must<T extends { status: number }>(r: T, status: number): T {
  if (r.status !== status)
    throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r)}`.slice(0, 500));
  return r;
}

const signup = await app.inject({
  method: 'POST',
  url: '/v2/auth/signup',
  payload: { email: 'mallory@example.test', password: 'long-enough-password' },
});
const { access_token: token, user } = JSON.parse(signup.body) as {
  access_token: string;
  user: { id: string };
};
const agent = must(await call('POST', '/v2/admin/agents', ADMIN, { name: 'cloud' }), 201).json;
const project = must(await call('POST', '/v2/projects', token, { name: 'p' }), 201).json;
const space = must(await call('GET', `/v2/projects/${project.id}/spaces`, token), 200).json.data[0];
const frame = must(
  await call('POST', `/v2/projects/${project.id}/spaces/${space.id}/frames`, token, {
    name: 'web',
    owner_id: user.id,
    git_repository: 'app',
    git_repository_owner: 'acme',
    git_repository_branch: 'main',
    port: 8080,
  }),
  201,
).json;
const base = `/v2/projects/${project.id}/spaces/${space.id}/frames/${frame.id}`;

/** `bytes` of keys and values in values of at most 32 KiB, at most 500 of them. */
function env(cycle: number, bytes: number) {
  const vars: Record<string, string> = {};
  for (let i = 0, left = bytes; left > 0 && i < 500; i++) {
    const key = `K${i}`;
    const n = Math.min(32 * 1024, left - key.length);
    vars[key] = `${cycle}-`.padEnd(n, 'x');
    left -= key.length + n;
  }
  return vars;
}

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log('cycle  rss_MB  heap_MB  env_bytes  deployments  sync_answer_bytes  env_cache');
let limit = 500 * (32 * 1024 + 4);
const EVERY = Math.max(5, Math.round(CYCLES / 60) * 5);
for (let c = 1; c <= CYCLES; c++) {
  let put = await call('PUT', `${base}/env`, token, { vars: env(c, limit) });
  const m = put.status === 422 ? /at most (\d+) bytes/.exec(put.json.detail) : null;
  if (m) {
    limit = Number(m[1]);
    put = await call('PUT', `${base}/env`, token, { vars: env(c, limit) });
  }
  must(put, 200);
  must(await call('POST', `${base}/deploy`, token), 202);
  const answer = must(await call('POST', '/v2/agent/sync', agent.token, {}), 200);
  if (c === 1 || c % EVERY === 0) {
    gc();
    const mem = process.memoryUsage();
    const rows = await db
      .selectFrom('deployments')
      .select(({ fn }: any) => fn.countAll().as('n'))
      .executeTakeFirst();
    const cache = services.sync.envCacheStats?.();
    console.log(
      [
        c,
        mb(mem.rss),
        mb(mem.heapUsed),
        limit,
        rows.n,
        answer.bytes,
        cache
          ? `${cache.entries} entries, ${mb(cache.bytes)} MB of ${mb(cache.maxBytes)}`
          : 'unbounded Map',
      ].join('  '),
    );
  }
}

await app.close();
await db.destroy();
await pg.stop();
rmSync(dir, { recursive: true, force: true });
