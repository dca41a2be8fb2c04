// The isolation test, one scenario for every runtime: the real service started as a
// new user starts it (embedded PostgreSQL, generated secret key, the built-in cloud agent), a
// signed-up user who deploys the attacker app, and the verdict of every attempt it made.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { attackerRepo } from './attacker.ts';
import { http, startInstance, until, type Instance } from '../faults/helpers/service.ts';
import { freePort } from '../helpers/smtp.ts';

/** The Unix socket of the embedded PostgreSQL, wherever under DATA_DIR it lives. */
function pgSocket(dir: string): string | undefined {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name.startsWith('.s.PGSQL.') && !name.endsWith('.lock')) return p;
    try {
      if (statSync(p).isDirectory() && name !== 'agent') {
        const f = pgSocket(p);
        if (f) return f;
      }
    } catch {
      /* gone */
    }
  }
  return undefined;
}

export interface Verdict {
  uid: number;
  verdict: Record<string, string>;
  logs: string;
}

export async function attackFrom(
  runtime: 'process' | 'docker' | 'swarm' | 'auto',
  env: Record<string, string> = {},
): Promise<Verdict> {
  const root = mkdtempSync(join(tmpdir(), `frameplane-isolation-${runtime}-`));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`, who must pass through
  const dataDir = join(root, 'data');
  let service: Instance | undefined;
  try {
    const gitBaseUrl = attackerRepo(root);
    service = await startInstance(
      `isolation-${runtime}`,
      {
        DATA_DIR: dataDir,
        CLOUD_AGENT: 'builtin',
        FRAME_RUNTIME: runtime,
        GIT_BASE_URL: gitBaseUrl,
        LOG_LEVEL: 'info',
        // As a new user runs it: embedded database, a key generated into DATA_DIR.
        DATABASE_URL: '',
        SECRET_KEY: '',
        ...env,
      },
      60_000,
    );
    const base = service.base;
    const signup = await http(base, 'POST', '/v2/auth/signup', {
      body: { email: 'mallory@example.test', password: 'a-long-password' },
    });
    const token = signup.json.access_token as string;
    const project = await http(base, 'POST', '/v2/projects', { token, body: { name: 'innocent' } });
    const spaces = await http(base, 'GET', `/v2/projects/${project.json.id}/spaces`, { token });
    const port = await freePort();
    const frames = `/v2/projects/${project.json.id}/spaces/${spaces.json.data[0].id}/frames`;
    const frame = await http(base, 'POST', frames, {
      token,
      body: {
        name: 'attacker',
        owner_id: signup.json.user.id,
        git_repository: 'attacker',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port,
      },
    });
    if (frame.status !== 201) throw new Error(`frame not created: ${frame.text}`);
    const path = `${frames}/${frame.json.id}`;
    const socket = pgSocket(dataDir);
    const vars = {
      TARGET_DATA_DIR: dataDir,
      TARGET_PID: String(service.child.pid),
      TARGET_SOURCE: resolve('.'),
      TARGET_PG_SOCKET: socket ?? '',
      TARGET_TCP: `127.0.0.1:5432,127.0.0.1:${service.port}`,
      // A container reaches the host through its bridge's gateway; other runtimes have no such address to try.
      TARGET_GATEWAY_PORTS: runtime === 'process' ? '' : `5432,${service.port}`,
    };
    const put = await http(base, 'PUT', `${path}/env`, { token, body: { vars } });
    if (put.status !== 200) throw new Error(`env not set: ${put.text}`);
    await http(base, 'POST', `${path}/deploy`, { token, body: {} });
    const logs = async () =>
      (await http(base, 'GET', `${path}/logs?limit=200`, { token })).json?.data
        ?.map((l: { line: string }) => l.line)
        .join('\n') ?? '';
    await until(
      'the attacker Online',
      () => http(base, 'GET', `${path}?wait_for=Online&timeout=10`, { token, timeoutMs: 15_000 }),
      (r) => r.json?.status === 'Online' && r.json?.latest_deployment?.status === 'succeeded',
      240_000,
      500,
    ).catch(async (err) => {
      throw new Error(
        `${(err as Error).message}\nframe logs:\n${await logs()}\nservice log:\n${service!.log().slice(-4000)}`,
      );
    });
    const r = await until(
      'the verdict',
      () => http(`http://127.0.0.1:${port}`, 'GET', '/verdict', { timeoutMs: 60_000 }),
      (x) => x.status === 200,
      60_000,
      500,
    );
    return { ...(r.json as { uid: number; verdict: Record<string, string> }), logs: await logs() };
  } finally {
    await service?.kill('SIGTERM');
    if (runtime === 'process') {
      // Whatever of the app survived the service (it should not have) goes too.
      try {
        execFileSync('pkill', ['-KILL', '-f', 'attacker listening|node server.js'], {
          stdio: 'ignore',
        });
      } catch {
        /* none */
      }
    }
    rmSync(root, { recursive: true, force: true });
  }
}
