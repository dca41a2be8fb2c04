// The service as a real child process (`node scripts/start.mjs`, as `npm start` runs it), as an
// operator runs it: its own port, its own pool and LISTEN connection, killed with real signals.
// Also a small HTTP client with a hard timeout, so a hanging request shows up as a measured
// failure instead of stalling the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { freePort } from '../../helpers/smtp.ts';
import { at } from '../../helpers/checked.ts';
import { waitFor } from '../../helpers/wait.ts';

export const ADMIN_TOKEN = 'admin-token-for-fault-tests';
export const SECRET_KEY = 'fault-tests-secret-key';

export interface Instance {
  name: string;
  base: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr (pino JSON lines). */
  log(): string;
  /** Resolves with the exit code (or the signal) once the process has ended. */
  exited: Promise<number | string | null>;
  kill(signal: NodeJS.Signals): Promise<number | string | null>;
}

const running = new Set<ChildProcess>();

/** SIGKILLs every child still alive; for afterAll, so a failed test leaves no process behind. */
export function killAll() {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export async function startInstance(
  name: string,
  env: Record<string, string>,
  readyTimeoutMs = 30_000,
): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      CLOUD_AGENT: 'none',
      SECRET_KEY,
      LOG_LEVEL: 'warn',
      DATA_DIR: '/tmp/frameplane-faults-unused',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let log = '';
  child.stdout!.on('data', (d) => {
    log += d;
  });
  child.stderr!.on('data', (d) => {
    log += d;
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal);
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      `instance ${name} to answer 200 on /readyz`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`it exited (${child.exitCode ?? child.signalCode})`);
        return fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.status,
          () => 'not listening yet',
        );
      },
      { until: (status) => status === 200, timeoutMs: readyTimeoutMs, everyMs: 100 },
    );
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`instance ${name} did not become ready (${(err as Error).message}):\n${log}`);
  }
  return {
    name,
    base,
    port,
    child,
    exited,
    log: () => log,
    kill(signal) {
      child.kill(signal);
      return exited;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HttpReply {
  status: number;
  json: any;
  text: string;
  headers: Headers;
  ms: number;
  /** Set when no answer came: a refused connection, a reset, or the client-side timeout. */
  error?: string;
}

/** One HTTP request with a hard client-side timeout; never throws. `status` 0 means no answer. */
export async function http(
  base: string,
  method: string,
  path: string,
  o: {
    token?: string;
    body?: unknown;
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<HttpReply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | undefined;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const started = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return {
      status: res.status,
      json,
      text,
      headers: res.headers,
      ms: performance.now() - started,
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return {
      status: 0,
      json: null,
      text: '',
      headers: new Headers(),
      ms: performance.now() - started,
      error: e.cause?.code ?? e.name ?? e.message,
    };
  }
}

/**
 * A new user of the service at `base` with a project, and a frame of `acme/app` (the git
 * fixture's) on port 3000 in its default space: what a new tenant does first.
 */
/** A new user's frame, made through the API (`settings`: more of the frame's fields). */
export async function newTenantFrame(
  base: string,
  email: string,
  settings: Record<string, unknown> = {},
) {
  const signup = await http(base, 'POST', '/v2/auth/signup', {
    body: { email, password: 'a-long-password' },
  });
  const token = signup.json.access_token as string;
  const project = await http(base, 'POST', '/v2/projects', { token, body: { name: 'P' } });
  const spaces = await http(base, 'GET', `/v2/projects/${project.json.id}/spaces`, { token });
  const frames = `/v2/projects/${project.json.id}/spaces/${spaces.json.data[0].id}/frames`;
  const frame = await http(base, 'POST', frames, {
    token,
    body: {
      name: 'web',
      owner_id: signup.json.user.id,
      git_repository: 'app',
      git_repository_owner: 'acme',
      git_repository_branch: 'main',
      port: 3000, // the app's own, inside its sandbox: the edge reaches it by hostname
      ...settings,
    },
  });
  if (frame.status !== 201) throw new Error(`frame not created: ${frame.status} ${frame.text}`);
  return { token, frame: frame.json, path: `${frames}/${frame.json.id}` };
}

/** Polls `probe` until `ok` holds; throws with the last value after `timeoutMs`. */
export function until<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  return waitFor(what, probe, { until: ok, timeoutMs, everyMs });
}

export interface Sample extends HttpReply {
  what: string;
  startedAt: number;
  endedAt: number;
}

/**
 * Load while a fault happens: `loops` loops walking `requests` in turn, and a readyz probe every
 * `probeEveryMs`; every answer is kept with its start and end times. stop() ends the loops.
 */
export function startLoad(
  base: string,
  requests: Array<[string, () => Promise<HttpReply>]>,
  loops: number,
  probeEveryMs: number,
) {
  const samples: Sample[] = [];
  const ready: Sample[] = [];
  let running = true;
  const timed = async (what: string, run: () => Promise<HttpReply>, into: Sample[]) => {
    const startedAt = Date.now();
    const r = await run();
    into.push({ ...r, what, startedAt, endedAt: Date.now() });
  };
  const loop = async (k: number) => {
    for (let i = k; running; i++) await timed(...at(requests, i % requests.length), samples);
  };
  const probe = async () => {
    while (running) {
      await timed('readyz', () => http(base, 'GET', '/readyz', { timeoutMs: 30_000 }), ready);
      await sleep(probeEveryMs);
    }
  };
  const all = Array.from({ length: loops }, (_, k) => loop(k)).concat(probe());
  return {
    samples,
    ready,
    async stop() {
      running = false;
      await Promise.all(all);
    },
  };
}

/** Percentiles of a list of numbers, rounded, for the report lines. */
export function stats(xs: number[]) {
  if (xs.length === 0) return { n: 0, p50: 0, p95: 0, max: 0 };
  const s = [...xs].sort((a, b) => a - b);
  const quantile = (q: number) =>
    Math.round(at(s, Math.min(s.length - 1, Math.floor(q * s.length))));
  return { n: s.length, p50: quantile(0.5), p95: quantile(0.95), max: Math.round(at(s, -1)) };
}

/** A line for the run's output: the figures each fault test measures. */
export function report(test: string, figures: Record<string, unknown>) {
  console.log(`[faults] ${test}: ${JSON.stringify(figures)}`);
}

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/**
 * Opens a text/event-stream and collects its events until close(). Plain node:http, so that
 * close() really closes the connection (as a browser's EventSource does); an aborted fetch may
 * leave its socket open, and the server's shutdown then waits for it.
 */
export async function openStream(
  base: string,
  path: string,
  token: string,
  headers: Record<string, string> = {},
) {
  const events: SseEvent[] = [];
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
  if (res.statusCode !== 200) throw new Error(`stream ${path} answered ${res.statusCode}`);
  res.setEncoding('utf8');
  let buffer = '';
  res.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .filter((l) => l.startsWith(`${name}:`))
          .map((l) => l.slice(name.length + 1).trim());
      const [event] = field('event');
      if (!event) continue; // retry: and comment lines
      const data = field('data').join('\n');
      events.push({ event, id: field('id')[0], data: data ? JSON.parse(data) : null });
    }
  });
  res.on('error', () => {});
  return {
    events,
    async close() {
      const closed = new Promise((r) => res.socket.once('close', r));
      res.socket.destroy();
      await closed;
    },
  };
}
