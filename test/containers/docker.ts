// A Docker Engine for the container tests, and the offline base image their apps run on.
//
// startDocker() uses the daemon at DOCKER_HOST (or the system one at /var/run/docker.sock) when
// it answers; otherwise it starts a private dockerd in a temp dir and, on stop(), takes away
// everything that dockerd leaves on the host: mounts, its bridges (docker0, docker_gwbridge and
// br-… of its networks), its iptables chains and rules, the FORWARD policy it sets to DROP
// (host-state.ts), and fails if anything still differs. What the host had before is recorded
// in a state file, so a run that died without stop() is cleaned up by the next one.
//
// Usable from a vitest globalSetup and from a plain script (`tsx test/containers/docker.ts`
// starts a daemon, builds the image, prints the figures and stops).
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type HostSnapshot, hostChanges, restoreHost, snapshotHost } from './host-state.ts';

export const TEST_LABEL = 'frameplane.test';
const DEFAULT_SOCKET = '/var/run/docker.sock';
const LOCK = join(tmpdir(), 'frameplane-dockerd.lock');
const STATE = join(tmpdir(), 'frameplane-dockerd.state.json');

export interface Docker {
  /** Path of the unix socket (empty for a tcp:// DOCKER_HOST). */
  socket: string;
  /** DOCKER_HOST form: unix:///path/docker.sock */
  host: string;
  /** True when we started this dockerd (stop() then removes everything on it). */
  own: boolean;
  /** Milliseconds from spawn to the first answered /_ping (0 when reused). */
  startMs: number;
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Engine API over node:http

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  text: string;
  raw: Buffer;
}

function target(host: string): { socketPath?: string; hostname?: string; port?: number } {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('/')) return { socketPath: host };
  const u = new URL(host.replace(/^tcp:/, 'http:'));
  return { hostname: u.hostname, port: Number(u.port || 2375) };
}

/** One Engine API call. `body` is JSON-encoded unless it is a readable stream (sent as is). */
export function dockerApi<T = any>(
  host: string,
  method: string,
  path: string,
  body?: unknown,
  opts: { timeoutMs?: number; contentType?: string } = {},
): Promise<ApiAnswer<T>> {
  return new Promise((resolveP, reject) => {
    const stream =
      body && typeof (body as any).pipe === 'function'
        ? (body as NodeJS.ReadableStream)
        : undefined;
    const json = body !== undefined && !stream ? JSON.stringify(body) : undefined;
    const headers: Record<string, string> = { host: 'docker' };
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (stream) headers['content-type'] = opts.contentType ?? 'application/x-tar';
    const req = request(
      { ...target(host), method, path, headers, timeout: opts.timeoutMs ?? 60_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let parsed: any = text;
          if ((res.headers['content-type'] ?? '').includes('json')) {
            try {
              parsed = JSON.parse(text);
            } catch {
              /* stream of JSON lines */
            }
          }
          resolveP({ status: res.statusCode ?? 0, body: parsed, text, raw });
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(
        new Error(`docker ${method} ${path}: no answer in ${opts.timeoutMs ?? 60_000} ms`),
      ),
    );
    req.on('error', reject);
    if (stream) {
      stream.on('error', (e) => req.destroy(e as Error));
      stream.pipe(req);
    } else req.end(json);
  });
}

/** Like dockerApi, but throws on a status >= 400 (or on one not in `ok`). */
export async function dockerCall<T = any>(
  host: string,
  method: string,
  path: string,
  body?: unknown,
  ok: number[] = [],
): Promise<T> {
  const a = await dockerApi<T>(host, method, path, body);
  if (a.status >= 400 && !ok.includes(a.status))
    throw new Error(`docker ${method} ${path}: ${a.status} ${a.text.trim()}`);
  return a.body;
}

export async function ping(host: string, timeoutMs = 2000): Promise<boolean> {
  try {
    return (await dockerApi(host, 'GET', '/_ping', undefined, { timeoutMs })).status === 200;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Host state: what dockerd changes is recorded before it starts (host-state.ts)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8' });
const has = (cmd: string) => run('sh', ['-c', `command -v ${cmd}`]).status === 0;

function pidAlive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e: any) {
    return e.code === 'EPERM';
  }
}

async function killAndWait(pid: number, graceMs: number): Promise<void> {
  if (!pidAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (const end = Date.now() + graceMs; Date.now() < end; ) {
    if (!pidAlive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (const end = Date.now() + 5000; Date.now() < end; ) {
    if (!pidAlive(pid)) return;
    await sleep(50);
  }
}

/** Processes whose command line mentions `dir` (containerd, shims, docker-proxy of our daemon). */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir)) pids.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return pids;
}

function unmountUnder(dir: string): void {
  for (let pass = 0; pass < 3; pass++) {
    const points = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4]?.replace(/\\040/g, ' '))
      .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
      .sort((a, b) => b.length - a.length);
    if (!points.length) return;
    for (const m of points) if (run('umount', [m]).status !== 0) run('umount', ['-l', m]);
  }
}

interface OwnState {
  ownerPid: number;
  dir: string;
  before: HostSnapshot;
}

/** Everything a private dockerd leaves behind, given what the host had before. Idempotent. */
async function cleanupOwn(state: OwnState): Promise<string[]> {
  const done: string[] = [];
  const pidFile = join(state.dir, 'pid');
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
  if (pid && pidAlive(pid)) {
    await killAndWait(pid, 20_000);
    done.push(`stopped dockerd ${pid}`);
  }
  for (const p of processesUnder(state.dir)) {
    await killAndWait(p, 3000);
    done.push(`stopped leftover process ${p}`);
  }
  unmountUnder(state.dir);
  rmSync(state.dir, { recursive: true, force: true });
  done.push(...restoreHost(state.before));
  return done;
}

// ---------------------------------------------------------------------------------------------
// One private dockerd per host at a time: a lock file holding the owner's pid

async function acquireLock(): Promise<void> {
  const deadline = Date.now() + 15 * 60_000;
  let said = false;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (e: any) {
      if (e.code !== 'EEXIST') throw e;
    }
    const owner = Number(readFileSync(LOCK, 'utf8').trim() || 0);
    if (!pidAlive(owner) || owner === process.pid) {
      // A run that died without stop(): clean up after it, then take the lock.
      if (existsSync(STATE)) {
        const st = JSON.parse(readFileSync(STATE, 'utf8')) as OwnState;
        const done = await cleanupOwn(st);
        console.warn(
          `[docker] cleaned up after an earlier run (pid ${st.ownerPid}): ${done.length} actions`,
        );
        rmSync(STATE, { force: true });
      }
      rmSync(LOCK, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another test run (pid ${owner}) holds ${LOCK}`);
    if (!said) {
      console.warn(`[docker] waiting for test run pid ${owner} to stop its dockerd`);
      said = true;
    }
    await sleep(1000);
  }
}

function releaseLock(): void {
  try {
    if (Number(readFileSync(LOCK, 'utf8').trim()) === process.pid) rmSync(LOCK, { force: true });
  } catch {
    /* none */
  }
}

// ---------------------------------------------------------------------------------------------

// Hosts on which we ran `swarm init` (stop() leaves the swarm on those).
const swarmsWeMade = new Set<string>();

async function removeOurObjects(host: string, all: boolean): Promise<void> {
  const filters = encodeURIComponent(JSON.stringify(all ? {} : { label: [`${TEST_LABEL}=1`] }));
  const info = await dockerApi(host, 'GET', '/info').catch(() => undefined);
  if (info?.body?.Swarm?.ControlAvailable) {
    const services = await dockerCall<any[]>(host, 'GET', `/services?filters=${filters}`).catch(
      () => [],
    );
    for (const s of services) await dockerApi(host, 'DELETE', `/services/${s.ID}`).catch(() => {});
  }
  // Tasks of removed services exit on their own; wait a little for them, then force the rest.
  for (let i = 0; i < 20; i++) {
    const cs = await dockerCall<any[]>(
      host,
      'GET',
      `/containers/json?all=1&filters=${filters}`,
    ).catch(() => []);
    if (!cs.length) break;
    for (const c of cs)
      await dockerApi(host, 'DELETE', `/containers/${c.Id}?force=1&v=1`).catch(() => {});
    await sleep(250);
  }
}

export async function startDocker(): Promise<Docker> {
  const shared = async (host: string): Promise<Docker> => {
    let stopped = false;
    return {
      host,
      socket: host.startsWith('unix://') ? host.slice(7) : '',
      own: false,
      startMs: 0,
      async stop() {
        if (stopped) return;
        stopped = true;
        await removeOurObjects(host, false);
        if (swarmsWeMade.delete(host))
          await dockerApi(host, 'POST', '/swarm/leave?force=1').catch(() => {});
      },
    };
  };
  if (process.env.DOCKER_HOST && (await ping(process.env.DOCKER_HOST)))
    return shared(process.env.DOCKER_HOST);
  if (existsSync(DEFAULT_SOCKET) && (await ping(`unix://${DEFAULT_SOCKET}`)))
    return shared(`unix://${DEFAULT_SOCKET}`);

  if (!has('dockerd'))
    throw new Error('dockerd not found: apt-get install -y --no-install-recommends docker.io');
  if (!has('ip') || !has('iptables-save') || !has('iptables-restore'))
    throw new Error(
      'ip, iptables-save and iptables-restore are needed to clean up after dockerd: ' +
        'apt-get install -y iproute2 iptables',
    );
  await acquireLock();
  let state: OwnState | undefined;
  try {
    const dir = mkdtempSync(join(tmpdir(), 'frameplane-docker-'));
    state = { ownerPid: process.pid, dir, before: snapshotHost() };
    writeFileSync(STATE, JSON.stringify(state));
    const socket = join(dir, 'docker.sock');
    const host = `unix://${socket}`;
    const logFile = join(dir, 'dockerd.log');
    const log = openSync(logFile, 'a');
    const t0 = Date.now();
    const child = spawn(
      'dockerd',
      [
        '--data-root',
        join(dir, 'data'),
        '--exec-root',
        join(dir, 'exec'),
        '--pidfile',
        join(dir, 'pid'),
        '-H',
        host,
        '--storage-driver',
        'overlay2',
        '--log-level',
        'info',
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    child.unref();
    let exited: string | undefined;
    child.on('exit', (code, sig) => {
      exited = `dockerd exited (${sig ?? code})`;
    });
    child.on('error', (e) => {
      exited = `dockerd: ${e.message}`;
    });
    const tail = () => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
      } catch {
        return '';
      }
    };
    for (;;) {
      if (exited) throw new Error(`${exited}; log ${logFile}:\n${tail()}`);
      if (await ping(host, 1000)) break;
      if (Date.now() - t0 > 60_000)
        throw new Error(`dockerd did not answer /_ping within 60 s; log:\n${tail()}`);
      await sleep(100);
    }
    const startMs = Date.now() - t0;
    const own = state;
    let stopped = false;
    return {
      host,
      socket,
      own: true,
      startMs,
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          if (!exited) {
            await removeOurObjects(host, true).catch(() => {});
            await dockerApi(host, 'POST', '/swarm/leave?force=1').catch(() => {});
          }
          swarmsWeMade.delete(host);
          const done = await cleanupOwn(own);
          if (process.env.FRAMEPLANE_DOCKER_VERBOSE)
            console.log(`[docker] teardown:\n  ${done.join('\n  ')}`);
          // Fails the run, passed or not, rather than leave the next one a changed host.
          const left = hostChanges(own.before);
          if (left.length)
            throw new Error(`dockerd left the host changed:\n  ${left.join('\n  ')}`);
        } finally {
          rmSync(STATE, { force: true });
          releaseLock();
        }
      },
    };
  } catch (e) {
    if (state) await cleanupOwn(state).catch(() => {});
    rmSync(STATE, { force: true });
    releaseLock();
    throw e;
  }
}

/** Makes the daemon a swarm manager (127.0.0.1) unless it is one; returns when its node is ready. */
export async function ensureSwarm(host: string): Promise<void> {
  const info = await dockerCall(host, 'GET', '/info');
  const st = info.Swarm?.LocalNodeState;
  if (st === 'active' && !info.Swarm.ControlAvailable)
    throw new Error('this Docker is a swarm worker, not a manager');
  if (st !== 'active') {
    await dockerCall(host, 'POST', '/swarm/init', {
      AdvertiseAddr: '127.0.0.1',
      ListenAddr: '127.0.0.1:2377',
    });
    swarmsWeMade.add(host);
  }
  for (const end = Date.now() + 60_000; ; ) {
    const nodes = await dockerCall<any[]>(host, 'GET', '/nodes').catch(() => []);
    if (
      nodes.some(
        (n) =>
          n.Status?.State === 'ready' &&
          n.Spec?.Availability === 'active' &&
          n.ManagerStatus?.Reachability === 'reachable',
      )
    )
      return;
    if (Date.now() > end)
      throw new Error(`swarm node not ready: ${JSON.stringify(nodes.map((n) => n.Status))}`);
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------
// The base image: the host's own Node.js and npm, busybox, users root / app (1000) / nobody

export const BASE_REPO = 'local/frameplane-node';

export interface BaseImageInfo {
  image: string;
  built: boolean;
  buildMs: number;
  sizeBytes: number;
}

/** Returns `local/frameplane-node:<node version>`, importing it first if the daemon lacks it. */
export async function ensureNodeBaseImage(host: string): Promise<string> {
  return (await nodeBaseImage(host)).image;
}

export async function nodeBaseImage(host: string): Promise<BaseImageInfo> {
  const tag = process.versions.node;
  const image = `${BASE_REPO}:${tag}`;
  const existing = await dockerApi(host, 'GET', `/images/${encodeURIComponent(image)}/json`);
  if (existing.status === 200)
    return { image, built: false, buildMs: 0, sizeBytes: existing.body.Size };
  const t0 = Date.now();
  const rootfs = mkdtempSync(join(tmpdir(), 'frameplane-rootfs-'));
  try {
    buildRootfs(rootfs);
    const changes = ['ENV PATH=/usr/local/bin:/usr/bin:/bin', 'WORKDIR /', `LABEL ${TEST_LABEL}=1`]
      .map((c) => `changes=${encodeURIComponent(c)}`)
      .join('&');
    const tar = spawn('tar', ['--numeric-owner', '-C', rootfs, '-c', '.'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tarErr = '';
    tar.stderr.on('data', (d) => {
      tarErr += d;
    });
    const tarDone = new Promise<number>((r) => tar.on('close', (code) => r(code ?? 1)));
    const a = await dockerApi(
      host,
      'POST',
      `/images/create?fromSrc=-&repo=${encodeURIComponent(BASE_REPO)}&tag=${encodeURIComponent(tag)}&${changes}`,
      tar.stdout,
      { timeoutMs: 300_000 },
    );
    const code = await tarDone;
    if (code !== 0) throw new Error(`tar failed (${code}): ${tarErr}`);
    const failed = a.text
      .split('\n')
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return {};
        }
      })
      .find((m) => m.error || m.errorDetail);
    if (a.status >= 400 || failed)
      throw new Error(`image import failed: ${a.status} ${failed?.error ?? a.text}`);
    const made = await dockerCall(host, 'GET', `/images/${encodeURIComponent(image)}/json`);
    return { image, built: true, buildMs: Date.now() - t0, sizeBytes: made.Size };
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

function findNpmRoot(): string {
  const candidates = [resolve(dirname(process.execPath), '../lib/node_modules/npm')];
  const which = run('sh', ['-c', 'command -v npm']);
  if (which.status === 0)
    candidates.push(resolve(dirname(realpathSync(which.stdout.trim())), '..'));
  for (const c of candidates) if (existsSync(join(c, 'bin/npm-cli.js'))) return c;
  throw new Error(`npm not found next to ${process.execPath}`);
}

function findBusybox(): string {
  for (const p of ['/bin/busybox', '/usr/bin/busybox']) {
    if (!existsSync(p)) continue;
    const ldd = run('ldd', [p]);
    if (
      ldd.status !== 0 ||
      /not a dynamic executable|statically linked/.test(ldd.stdout + ldd.stderr)
    )
      return p;
  }
  throw new Error(
    'a static busybox is needed: apt-get install -y --no-install-recommends busybox-static',
  );
}

/** Copies a host file to the same path in the rootfs, following symlinks. */
function copyIn(rootfs: string, hostPath: string, at = hostPath): void {
  const dest = join(rootfs, at);
  mkdirSync(dirname(dest), { recursive: true });
  copyFileSync(realpathSync(hostPath), dest);
  chmodSync(dest, statSync(realpathSync(hostPath)).mode & 0o7777);
}

export function buildRootfs(rootfs: string): void {
  for (const d of [
    'bin',
    'usr/bin',
    'usr/local/bin',
    'usr/lib',
    'etc',
    'dev',
    'proc',
    'sys',
    'root',
    'home/app',
    'var/tmp',
    'tmp',
  ]) {
    mkdirSync(join(rootfs, d), { recursive: true });
  }
  // Node.js and the libraries it links (with the loader).
  copyIn(rootfs, process.execPath, '/usr/bin/node');
  const ldd = run('ldd', [process.execPath]);
  if (ldd.status === 0) {
    for (const line of ldd.stdout.split('\n')) {
      const m = line.match(/=>\s*(\/\S+)/) ?? line.match(/^\s*(\/\S+)/);
      if (m?.[1]) copyIn(rootfs, m[1]);
    }
  }
  // npm and npx as the npm package installs them.
  cpSync(findNpmRoot(), join(rootfs, 'usr/lib/node_modules/npm'), {
    recursive: true,
    dereference: true,
  });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/bin/npx'));
  // busybox with its applets in /bin (sh, wget, env, ...), and /usr/bin/env for #! lines.
  copyIn(rootfs, findBusybox(), '/bin/busybox');
  const applets = run(join(rootfs, 'bin/busybox'), ['--list'])
    .stdout.split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const a of applets)
    if (a !== 'busybox' && !existsSync(join(rootfs, 'bin', a)))
      symlinkSync('busybox', join(rootfs, 'bin', a));
  symlinkSync('/bin/busybox', join(rootfs, 'usr/bin/env'));
  // Users, groups, name service.
  writeFileSync(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n',
  );
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\napp:x:1000:\nnogroup:x:65534:\n');
  writeFileSync(
    join(rootfs, 'etc/nsswitch.conf'),
    'passwd: files\ngroup: files\nhosts: files dns\n',
  );
  if (existsSync('/etc/ssl/certs'))
    cpSync('/etc/ssl/certs', join(rootfs, 'etc/ssl/certs'), { recursive: true, dereference: true });
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  chmodSync(join(rootfs, 'var/tmp'), 0o1777);
  chmodSync(join(rootfs, 'root'), 0o700);
  chownSync(join(rootfs, 'home/app'), 1000, 1000);
  chmodSync(join(rootfs, 'home/app'), 0o755);
}

// ---------------------------------------------------------------------------------------------
// As a script: start, swarm, image, figures, stop.

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const d = await startDocker();
  try {
    console.log(`docker: ${d.host} (${d.own ? `own dockerd, up in ${d.startMs} ms` : 'reused'})`);
    const t = Date.now();
    await ensureSwarm(d.host);
    console.log(`swarm ready in ${Date.now() - t} ms`);
    const img = await nodeBaseImage(d.host);
    console.log(
      `${img.image}: ${img.built ? `built in ${img.buildMs} ms` : 'already there'}, ${(img.sizeBytes / 1e6).toFixed(1)} MB`,
    );
  } finally {
    const t = Date.now();
    await d.stop();
    console.log(`stopped in ${Date.now() - t} ms`);
  }
}
