// One replica: a process group running the frame's web command on a private port, its health
// checks and its output. Spawned detached, so it leads its own group and a stop reaches every
// process under it (`npm start` → sh → node); its output goes to a file (see log.ts), so it can
// outlive the agent and be adopted. The supervisor (frame-runner.ts) decides about restarts.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync } from 'node:fs';
import type { ReplicaEventType } from './protocol.ts';
import type { PersistedReplica } from './state.ts';
import { tailFile, type Tailer } from './log.ts';
import { checkEveryMs, FAILURES_FOR_UNHEALTHY, passes, probe, START_GRACE_MS } from './health.ts';
import { isAlive, signalGroup, sleep, startTimeOf } from './processes.ts';

/** Restart delays after successive crashes: 1 s, 2 s, 4 s… capped at 30 s. */
export function restartDelayMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, Math.min(attempt, 15)));
}

/** Healthy this long, a replica's next crash starts the delays over. */
export const STABLE_AFTER_MS = 10_000;
export const STOP_GRACE_MS = 10_000;

export interface ExitInfo { code: number | null; signal: string | null; oom: boolean; ranHealthyMs: number }

/** An exit by SIGKILL (the kernel's OOM killer sends it) or with 137 (128 + 9 from a shell). */
export function isOomExit(code: number | null, signal: string | null, heapExhausted = false): boolean {
  return signal === 'SIGKILL' || code === 137 || heapExhausted;
}

export interface ReplicaHooks {
  report(type: ReplicaEventType, detail?: Record<string, unknown>): void;
  line(line: string): void;
  exited(info: ExitInfo): void;
}

export class Replica {
  state: 'starting' | 'healthy' | 'unhealthy' | 'exited' = 'starting';
  private stopping = false;
  private child?: ChildProcess;
  private tailer: Tailer;
  private timer?: NodeJS.Timeout;
  private exitWaiters: Array<() => void> = [];
  private failures = 0;
  private speaksHttp = false;
  private heapExhausted = false;
  private readonly startedAt = Date.now();
  private healthySince?: number;

  private constructor(
    readonly index: number, readonly pid: number, readonly startTime: string | undefined, readonly port: number,
    readonly logFile: string, logOffset: number, private hooks: ReplicaHooks,
  ) {
    this.tailer = tailFile(logFile, logOffset, (line) => {
      // Node's own message when the V8 heap is full: an out-of-memory death, not a plain crash.
      if (line.includes('JavaScript heap out of memory')) this.heapExhausted = true;
      hooks.line(line);
    });
  }

  static spawn(o: { index: number; port: number; cwd: string; command: string; env: NodeJS.ProcessEnv; logFile: string; hooks: ReplicaHooks }): Replica {
    // The file may hold an earlier run of this slot, already sent: read only what comes now.
    const fd = openSync(o.logFile, 'a');
    const from = fstatSync(fd).size;
    let child: ChildProcess;
    try {
      child = spawn('sh', ['-c', o.command], { cwd: o.cwd, env: o.env, detached: true, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    child.unref();
    const pid = child.pid ?? -1;
    const r = new Replica(o.index, pid, pid > 0 ? startTimeOf(pid) : undefined, o.port, o.logFile, from, o.hooks);
    r.child = child;
    o.hooks.report('starting');
    child.once('error', (err) => { o.hooks.line(`[frameplane] could not start: ${err.message}`); r.onExit(127, null); });
    child.once('exit', (code, signal) => r.onExit(code, signal));
    r.schedule(0);
    return r;
  }

  /** Takes over a replica started by an earlier agent; the caller has checked that it lives. */
  static adopt(p: PersistedReplica, hooks: ReplicaHooks): Replica {
    const r = new Replica(p.index, p.pid, p.start_time, p.port, p.log_file, p.log_offset, hooks);
    // Not our child: no exit event, so its liveness is polled with the health checks.
    r.schedule(0);
    return r;
  }

  persisted(): PersistedReplica {
    return { index: this.index, pid: this.pid, start_time: this.startTime, port: this.port, log_file: this.logFile, log_offset: this.tailer.offset() };
  }

  get healthy() { return this.state === 'healthy'; }
  get exited() { return this.state === 'exited'; }

  private schedule(ms: number) {
    if (this.state === 'exited') return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), ms);
    this.timer.unref();
  }

  /** Exited, or being stopped: health checks no longer matter. */
  private get over() { return this.state === 'exited' || this.stopping; }

  private async check() {
    if (this.over) return;
    if (!this.child && !isAlive(this.pid, this.startTime)) return this.onExit(null, null);
    const p = await probe(this.port);
    if (this.over) return;
    if (p.kind === 'http') this.speaksHttp = true;
    if (passes(p, this.speaksHttp)) {
      this.failures = 0;
      if (this.state !== 'healthy') {
        this.state = 'healthy';
        this.healthySince = Date.now();
        this.hooks.report('healthy');
      }
    } else {
      this.failures++;
      const counts = this.state === 'healthy' || Date.now() - this.startedAt > START_GRACE_MS;
      if (counts && this.failures >= FAILURES_FOR_UNHEALTHY && this.state !== 'unhealthy') {
        this.state = 'unhealthy';
        this.healthySince = undefined;
        this.hooks.report('unhealthy', { reason: p.kind === 'http' ? `http_${p.status}` : p.kind });
      }
    }
    this.schedule(checkEveryMs(this.state === 'healthy'));
  }

  private onExit(code: number | null, signal: string | null) {
    if (this.state === 'exited') return;
    const ranHealthyMs = this.healthySince ? Date.now() - this.healthySince : 0;
    this.state = 'exited';
    clearTimeout(this.timer);
    signalGroup(this.pid, 'SIGKILL'); // what the leader left behind must not hold the port
    this.tailer.stop();
    for (const w of this.exitWaiters.splice(0)) w();
    if (!this.stopping) this.hooks.exited({ code, signal, oom: isOomExit(code, signal, this.heapExhausted), ranHealthyMs });
  }

  private waitExit(ms: number): Promise<boolean> {
    if (this.state === 'exited') return Promise.resolve(true);
    return new Promise((resolve) => {
      const poll = setInterval(() => { if (!this.child && !isAlive(this.pid, this.startTime)) this.onExit(null, null); }, 200);
      const timer = setTimeout(() => { clearInterval(poll); resolve(false); }, ms);
      this.exitWaiters.push(() => { clearInterval(poll); clearTimeout(timer); resolve(true); });
    });
  }

  /** SIGTERM to the group, SIGKILL after the grace period; resolves once it is gone. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    if (this.state === 'exited') return;
    this.stopping = true;
    clearTimeout(this.timer);
    signalGroup(this.pid, 'SIGTERM');
    if (!(await this.waitExit(graceMs))) {
      signalGroup(this.pid, 'SIGKILL');
      if (!(await this.waitExit(5000))) this.onExit(null, 'SIGKILL'); // unkillable: give up on it
    }
    await sleep(0);
  }

  /** Leaves the process running (the agent exits and a later one adopts it). */
  detach() {
    clearTimeout(this.timer);
    this.stopping = true;
    this.tailer.stop(false);
  }
}
