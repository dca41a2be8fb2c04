// The isolation scenarios, one for every runtime: the real service started as a new user
// starts it (embedded PostgreSQL, generated secret key, the built-in cloud agent), a signed-up
// tenant who deploys apps through the API, and what came of it. `attackFrom`: the attacker app
// tries every way out of its runtime. `hostileFrom` (hostile-scenario.ts): repositories made to
// turn the agent itself against its machine. Frames are reached as anyone reaches them: through
// the built-in cloud's edge, at their hostnames.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { attackerRepo } from './attacker.ts';
import { http, startInstance, until, type Instance } from '../faults/helpers/service.ts';
import { freePort } from '../helpers/smtp.ts';
import { hitFrame, type Hit } from '../runner/fixture.ts';

export type Runtime = 'process' | 'docker' | 'swarm' | 'kubernetes' | 'auto';

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

export interface Frame {
  path: string;
  /** Where the edge serves it (Host). */
  hostname: string;
  json: any;
}

/** The port of every frame's app, inside its sandbox or container: they need not differ. */
export const APP_PORT = 8080;

/** A signed-up user with a project, deploying frames through the API as anyone may. */
export interface Tenant {
  base: string;
  token: string;
  frame(name: string, repo: string, branch?: string): Promise<Frame>;
  /** The frame once it is Online, or once its latest deployment failed; `Error` throws. */
  settled(f: Frame, timeoutMs?: number): Promise<any>;
  logs(f: Frame): Promise<string>;
  /** One GET to the frame through the edge, at its hostname. */
  get(f: Frame, path?: string, timeoutMs?: number): Promise<Hit>;
}

export interface World {
  root: string;
  dataDir: string;
  service: Instance;
  tenant: Tenant;
}

/** Runs `fn` against a fresh service on `runtime` whose git host is made by `repos(root)`. */
export async function withService<T>(
  runtime: Runtime,
  repos: (root: string) => string,
  env: Record<string, string>,
  fn: (w: World) => Promise<T>,
): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), `frameplane-isolation-${runtime}-`));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`, who must pass through
  const dataDir = join(root, 'data');
  let service: Instance | undefined;
  try {
    const gitBaseUrl = repos(root);
    const edgePort = await freePort();
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
        EDGE_HTTP_PORT: String(edgePort),
        ...env,
      },
      60_000,
    );
    const s = service;
    const tenant = await signUp(s.base, Number(env.EDGE_HTTP_PORT ?? edgePort), () => s.log());
    return await fn({ root, dataDir, service: s, tenant });
  } finally {
    await service?.kill('SIGTERM');
    if (runtime === 'process') {
      // Whatever of the apps survived the service (they should not have) goes too.
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

async function signUp(base: string, edgePort: number, serviceLog: () => string): Promise<Tenant> {
  const signup = await http(base, 'POST', '/v2/auth/signup', {
    body: { email: 'mallory@example.test', password: 'a-long-password' },
  });
  const token = signup.json.access_token as string;
  const project = await http(base, 'POST', '/v2/projects', { token, body: { name: 'innocent' } });
  const spaces = await http(base, 'GET', `/v2/projects/${project.json.id}/spaces`, { token });
  const frames = `/v2/projects/${project.json.id}/spaces/${spaces.json.data[0].id}/frames`;
  const logs = async (f: Frame) =>
    (await http(base, 'GET', `${f.path}/logs?limit=200`, { token })).json?.data
      ?.map((l: { line: string }) => l.line)
      .join('\n') ?? '';
  return {
    base,
    token,
    logs,
    get: (f, path = '/', timeoutMs = 3000) => hitFrame(edgePort, f.hostname, path, timeoutMs),
    async frame(name, repo, branch = 'main') {
      const r = await http(base, 'POST', frames, {
        token,
        body: {
          name,
          owner_id: signup.json.user.id,
          git_repository: repo,
          git_repository_owner: 'acme',
          git_repository_branch: branch,
          port: APP_PORT,
        },
      });
      if (r.status !== 201) throw new Error(`frame not created: ${r.text}`);
      return { path: `${frames}/${r.json.id}`, hostname: r.json.hostname, json: r.json };
    },
    async settled(f, timeoutMs = 240_000) {
      const r = await until(
        `${f.json.name} Online or failed`,
        () =>
          http(base, 'GET', `${f.path}?wait_for=Online&timeout=10`, { token, timeoutMs: 15_000 }),
        (x) =>
          x.json?.latest_deployment?.status === 'failed' ||
          (x.json?.status === 'Error' && x.json?.latest_deployment?.status !== 'in_progress') ||
          (x.json?.status === 'Online' && x.json?.latest_deployment?.status === 'succeeded'),
        timeoutMs,
        500,
      );
      // Error with a release that built is a crash: say all there is to say.
      if (r.json.status === 'Error' && r.json.latest_deployment?.status !== 'failed')
        throw new Error(
          `${f.json.name}: ${JSON.stringify(r.json.latest_deployment)}\nframe logs:\n${await logs(f)}\nservice log:\n${serviceLog().slice(-4000)}`,
        );
      return r.json;
    },
  };
}

export interface Verdict {
  uid: number;
  verdict: Record<string, string>;
  logs: string;
}

export function attackFrom(runtime: Runtime, env: Record<string, string> = {}): Promise<Verdict> {
  return withService(runtime, attackerRepo, env, async ({ dataDir, service, tenant }) => {
    const f = await tenant.frame('attacker', 'attacker');
    const vars = {
      TARGET_DATA_DIR: dataDir,
      TARGET_PID: String(service.child.pid),
      TARGET_SOURCE: resolve('.'),
      TARGET_PG_SOCKET: pgSocket(dataDir) ?? '',
      TARGET_TCP: `127.0.0.1:5432,127.0.0.1:${service.port}`,
      // A container reaches the host through its bridge's gateway; other runtimes have no such address to try.
      TARGET_GATEWAY_PORTS: runtime === 'process' ? '' : `5432,${service.port}`,
    };
    const { base, token } = tenant;
    const put = await http(base, 'PUT', `${f.path}/env`, { token, body: { vars } });
    if (put.status !== 200) throw new Error(`env not set: ${put.text}`);
    await http(base, 'POST', `${f.path}/deploy`, { token, body: {} });
    await until(
      'the attacker Online',
      () => http(base, 'GET', `${f.path}?wait_for=Online&timeout=10`, { token, timeoutMs: 15_000 }),
      (r) => r.json?.status === 'Online' && r.json?.latest_deployment?.status === 'succeeded',
      240_000,
      500,
    ).catch(async (err) => {
      throw new Error(
        `${(err as Error).message}\nframe logs:\n${await tenant.logs(f)}\nservice log:\n${service.log().slice(-4000)}`,
      );
    });
    const r = await until(
      'the verdict',
      () => tenant.get(f, '/verdict', 60_000),
      (x) => 'status' in x && x.status === 200,
      60_000,
      500,
    );
    if (!('body' in r)) throw new Error(`no verdict: ${r.error}`);
    return {
      ...(JSON.parse(r.body) as { uid: number; verdict: Record<string, string> }),
      logs: await tenant.logs(f),
    };
  });
}
