// The HAProxy data plane (issue 35): Debian's `haproxy` 2.6, run by the agent, applying the
// routing table (edge/table.ts) through its Runtime API, never by a reload. Each frame holds a
// backend slot (config.ts) whose servers are its replicas; each host is a map entry to its
// frame's slot, or to the page saying why it does not answer. A replica taken out of a route is
// set to drain (no new requests), taken out once its connections have ended or the drain timeout
// passed. The admin socket is in the agent's own directory (0600), out of every frame's sight.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Endpoint } from '../../runtimes/runtime.ts';
import { endpointKey, normalizeHost, type FrameRoute, type RoutingTable } from '../table.ts';
import {
  ACCESS_PIPE,
  ACME_SOCKET,
  CRT_LIST,
  isTemplateServer,
  MAP,
  pageBackend,
  pageFiles,
  renderConfig,
  SERVERS_PER_SLOT,
  SOCKET,
  slotName,
  templateServer,
  TLS_MAP,
  type HaproxyConfig,
} from './config.ts';
import { RuntimeApi } from './runtime-api.ts';
import { frameOfLine, parseAccessLine } from './access-log.ts';
import { type AccessPipe, openAccessPipe } from './access-follow.ts';
import type { RequestMeter } from '../request-meter.ts';
import { type EdgeLines, pageDesc, terminationDesc } from '../edge-lines.ts';
import { HaproxyTls, type HaproxyTlsOptions } from './tls.ts';

export interface HaproxyPlaneOptions extends Omit<HaproxyConfig, 'slots' | 'httpsPort'> {
  /** HTTPS too, on this port, with the edge's certificates. */
  https?: Omit<HaproxyTlsOptions, 'dir' | 'onError'> & { port: number };
  table: RoutingTable;
  /** Where a route change or a certificate that HAProxy refused is told. */
  onError?: (err: Error, about: { frame_id: string } | { hostname: string }) => void;
  /** Frames it can route at once (backends made at start). */
  slots?: number;
  drainTimeoutMs: number;
  /** Where each answer for a frame is counted, from HAProxy's access lines. */
  requests?: RequestMeter;
  /** Where the answers it made itself instead of an app are told (a frame's log). */
  lines?: EdgeLines;
}

const serverName = (e: Endpoint) =>
  `r_${createHash('sha256').update(endpointKey(e)).digest('hex').slice(0, 16)}`;
const address = (e: Endpoint) => ('path' in e ? `unix@${e.path}` : `${e.host}:${e.port}`);
/** A server taken out of its route: gone once `done`, unless it came back (`cancelled`);
 *  `replaced` when a spare took its replica over. */
interface Leaving {
  slot: number;
  key: string;
  name: string;
  replaced: boolean;
  cancelled: boolean;
  done?: Promise<void>;
}
/** A slot's servers: those in its route by endpoint key, and its spare declared ones. */
interface SlotServers {
  byKey: Map<string, { name: string; e: Endpoint }>;
  spare: string[];
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What HAProxy answers a state change that it made: nothing. */
const ok = (answer: string) => answer === '';

export class HaproxyPlane {
  private child?: ChildProcess;
  private api: RuntimeApi;
  private slots = new Map<string, number>();
  /** Which frame holds each slot taken: the frame of an access line naming it. */
  private slotFrames = new Map<number, string>();
  private free: number[];
  /** Per slot, its servers. */
  private servers = new Map<number, SlotServers>();
  /** Hosts mapped now, and to which backend. */
  private mapped = new Map<string, string>();
  /** Servers draining. */
  private draining = new Set<Leaving>();
  private applying: Promise<void> = Promise.resolve();
  private stopListening?: () => void;
  private exited?: Promise<void>;
  private tls?: HaproxyTls;
  private accessLog?: AccessPipe;

  constructor(private o: HaproxyPlaneOptions) {
    this.api = new RuntimeApi(join(o.dir, SOCKET));
    this.free = Array.from({ length: o.slots ?? 1000 }, (_, i) => i);
  }

  get port() {
    return this.o.httpPort;
  }

  get httpsPort() {
    return this.o.https?.port;
  }

  async listen(): Promise<void> {
    const dir = this.o.dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    stopLeftOver(join(dir, 'haproxy.pid'));
    for (const [name, body] of Object.entries(pageFiles())) writeFileSync(join(dir, name), body);
    for (const file of [MAP, TLS_MAP, CRT_LIST]) writeFileSync(join(dir, file), '');
    rmSync(join(dir, ACME_SOCKET), { force: true });
    const cfg = join(dir, 'haproxy.cfg');
    const config = { ...this.o, slots: this.free.length, httpsPort: this.o.https?.port };
    writeFileSync(cfg, renderConfig(config), { mode: 0o600 });
    let output = '';
    // Only the end of what it says is kept: the reason it did not start.
    const said = (d: Buffer | string) => {
      output = `${output}${d}`.slice(-4000);
    };
    // Its log (fd 3): the pipe of its access lines, read by the agent.
    this.accessLog?.close();
    const log = openAccessPipe(join(dir, ACCESS_PIPE), (line) => this.accessLine(line));
    this.accessLog = log;
    const child = spawn('haproxy', ['-db', '-f', cfg], {
      stdio: ['ignore', 'pipe', 'pipe', log.fd],
    });
    this.child = child;
    writeFileSync(join(dir, 'haproxy.pid'), String(child.pid ?? ''));
    child.stdout?.on('data', said);
    child.stderr?.on('data', said);
    this.exited = new Promise((r) => child.once('exit', () => r()));
    const failed = new Promise<never>((_, reject) =>
      child.once('error', (err) => reject(new Error(`haproxy did not start: ${err.message}`))),
    );
    for (let i = 0; ; i++) {
      const up = await Promise.race([
        this.api.command('show info').then(
          (a) => a.includes('Name: HAProxy'),
          () => false,
        ),
        failed,
      ]);
      if (up) break;
      if (child.exitCode !== null || i > 100)
        throw new Error(`haproxy did not start: ${output.trim().slice(-500)}`);
      await sleep(50);
    }
    if (this.o.https) {
      const { port: _, ...https } = this.o.https;
      this.tls = new HaproxyTls(this.api, {
        ...https,
        dir,
        onError: (err, hostname) => this.o.onError?.(err, { hostname }),
      });
      await this.tls.start();
    }
    this.stopListening = this.o.table.onChange((frameId, before, after) =>
      this.queue(frameId, () => this.apply(frameId, before, after)),
    );
    for (const route of this.o.table.routes())
      this.queue(route.frameId, () => this.apply(route.frameId, undefined, route));
    await this.applying;
  }

  /** Counts the request of an access line. */
  private accessLine(line: string) {
    const l = parseAccessLine(line);
    if (!l) return;
    const frameId = frameOfLine(
      l,
      (slot) => this.slotFrames.get(slot),
      (host) => this.o.table.resolve(host).frameId,
    );
    if (frameId === undefined) return;
    this.o.requests?.record(frameId, l.status, l.ms);
    if (l.status < 500) return;
    // Its own pages (the backends page_<kind>), or a replica that failed the request.
    const page = l.backend.startsWith('page_') ? l.backend.slice('page_'.length) : undefined;
    const desc = page ? pageDesc(page) : terminationDesc(l.ended);
    if (desc) this.o.lines?.failed(frameId, { ...l, desc });
  }

  private queue(frameId: string, work: () => Promise<void>) {
    this.applying = this.applying
      .then(work)
      .catch((err: Error) => this.o.onError?.(err, { frame_id: frameId }));
  }

  /** The backend a host goes to now, as the table resolves it; undefined: no entry (404). */
  private backendOf(host: string): string | undefined {
    const t = this.o.table.resolve(host);
    if (t.kind === 'page') return t.frameId === undefined ? undefined : pageBackend(t.page);
    const slot = this.slots.get(t.frameId);
    return slot === undefined ? pageBackend('starting') : slotName(slot);
  }

  private async apply(frameId: string, before?: FrameRoute, after?: FrameRoute) {
    let slot = this.slots.get(frameId);
    if (after && slot === undefined) {
      slot = this.free.shift();
      if (slot === undefined) throw new Error('haproxy plane: no backend slot left');
      this.slots.set(frameId, slot);
      this.slotFrames.set(slot, frameId);
    }
    // Replicas first, so that a host never points at a slot without them.
    if (slot !== undefined) await this.setServers(slot, after?.upstreams ?? []);
    const hosts = new Set(
      [...(before?.hosts ?? []), ...(after?.hosts ?? [])].flatMap((h) => normalizeHost(h) ?? []),
    );
    if (!after && slot !== undefined) {
      this.slots.delete(frameId);
      this.slotFrames.delete(slot);
      this.free.push(slot);
    }
    for (const host of hosts) await this.mapHost(host, this.backendOf(host));
  }

  private async mapHost(host: string, backend: string | undefined) {
    const map = join(this.o.dir, MAP);
    const held = this.mapped.get(host);
    if (held === backend) return;
    if (backend === undefined) {
      await this.api.command(`del map ${map} ${host}`);
      this.mapped.delete(host);
    } else if (held === undefined) {
      await this.api.expect(`add map ${map} ${host} ${backend}`, (a) => a === '');
      this.mapped.set(host, backend);
    } else {
      await this.api.expect(`set map ${map} ${host} ${backend}`, (a) => a === '');
      this.mapped.set(host, backend);
    }
  }

  private slotServers(slot: number): SlotServers {
    let held = this.servers.get(slot);
    if (!held) {
      const spare = Array.from({ length: SERVERS_PER_SLOT }, (_, i) => templateServer(i));
      held = { byKey: new Map(), spare };
      this.servers.set(slot, held);
    }
    return held;
  }

  private async setServers(slot: number, ends: readonly Endpoint[]) {
    const held = this.slotServers(slot).byKey;
    const wanted = new Map(ends.map((e) => [endpointKey(e), e]));
    const backend = slotName(slot);
    for (const [key, e] of wanted) {
      if (held.has(key)) continue;
      // Another frame's replica that had this address may still drain: its server is in its
      // own backend, apart. (Waiting for it here would wait on this queue, which it needs.)
      const leaving = [...this.draining].find((l) => l.key === key && l.slot === slot);
      if (leaving && !leaving.replaced) {
        // The same replica back in its route (a health check that failed once): ready again.
        leaving.cancelled = true;
        this.draining.delete(leaving);
        await this.api.expect(`set server ${backend}/${leaving.name} state ready`, ok);
        held.set(key, { name: leaving.name, e });
        continue;
      }
      held.set(key, { name: await this.addServer(slot, e), e });
    }
    for (const [key, { name }] of held) {
      if (wanted.has(key)) continue;
      held.delete(key);
      await this.startDrain(slot, key, name, false);
    }
  }

  /** No new requests to the server; it is taken out once its requests have ended. */
  private async startDrain(slot: number, key: string, name: string, replaced: boolean) {
    await this.api.expect(`set server ${slotName(slot)}/${name} state drain`, ok);
    const leaving: Leaving = { slot, key, name, replaced, cancelled: false, done: undefined };
    leaving.done = this.retire(leaving).finally(() => this.draining.delete(leaving));
    this.draining.add(leaving);
  }

  /** Points a spare server of the slot at the replica, or adds one (a Unix socket, or more
   *  replicas than spares); answers its name. */
  private async addServer(slot: number, e: Endpoint): Promise<string> {
    const backend = slotName(slot);
    const spare = 'host' in e && isIP(e.host) ? this.slotServers(slot).spare.shift() : undefined;
    if (spare && 'host' in e) {
      await this.api.expect(`set server ${backend}/${spare} addr ${e.host} port ${e.port}`, (a) =>
        /changed|no need/.test(a),
      );
      await this.api.expect(`set server ${backend}/${spare} state ready`, ok);
      return spare;
    }
    const name = serverName(e);
    await this.api.expect(`add server ${backend}/${name} ${address(e)}`, (a) =>
      a.includes('New server registered'),
    );
    await this.api.command(`enable server ${backend}/${name}`);
    return name;
  }

  /** Takes a draining server out once its connections have ended, or at the drain timeout;
   *  not if it came back meanwhile. A spare goes back to its slot's spares, in maintenance
   *  (which closes its idle connections), an added one is deleted. */
  private async retire(leaving: Leaving) {
    const { slot, name } = leaving;
    const backend = slotName(slot);
    const deadline = Date.now() + this.o.drainTimeoutMs;
    while (Date.now() < deadline && !leaving.cancelled && (await this.sessions(backend, name)) > 0)
      await sleep(100);
    // Queued behind route changes, so that a return of the server is seen first.
    await new Promise<void>((resolve) =>
      this.queue('', async () => {
        try {
          if (leaving.cancelled) return;
          await this.api.command(`set server ${backend}/${name} state maint`);
          await this.api.command(`shutdown sessions server ${backend}/${name}`);
          if (!isTemplateServer(name)) await this.api.command(`del server ${backend}/${name}`);
          else {
            this.slotServers(slot).spare.push(name);
            await this.takeSpares(slot);
          }
        } finally {
          resolve();
        }
      }),
    );
  }

  /** A spare came back: a replica that had to be added takes it, and with it kept connections. */
  private async takeSpares(slot: number) {
    const s = this.slotServers(slot);
    for (const [key, { name, e }] of s.byKey) {
      if (s.spare.length === 0) return;
      if (isTemplateServer(name) || !('host' in e) || !isIP(e.host)) continue;
      s.byKey.set(key, { name: await this.addServer(slot, e), e });
      await this.startDrain(slot, key, name, true);
    }
  }

  /** The server's current sessions (`scur` of `show stat`). */
  private async sessions(backend: string, name: string): Promise<number> {
    const csv = await this.api.command('show stat').catch(() => '');
    const head = csv.split('\n')[0]?.replace(/^# /, '').split(',') ?? [];
    const scur = head.indexOf('scur');
    for (const line of csv.split('\n')) {
      const cols = line.split(',');
      if (cols[0] === backend && cols[1] === name) return Number(cols[scur] ?? 0);
    }
    return 0;
  }

  /** Resolves once these replicas' requests have ended (or the drain timeout passed). */
  async drain(ends: readonly Endpoint[]): Promise<void> {
    await this.applying;
    const keys = new Set(ends.map(endpointKey));
    await Promise.all([...this.draining].filter((l) => keys.has(l.key)).map((l) => l.done));
  }

  async close(): Promise<void> {
    this.stopListening?.();
    await this.tls?.close();
    this.child?.kill('SIGTERM');
    await this.exited;
    this.accessLog?.close();
  }
}

/** An haproxy left by an agent that was killed holds the ports: it goes first. */
function stopLeftOver(pidFile: string) {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (cmd.startsWith('haproxy')) process.kill(pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}
