// The agent: adopts what an earlier run left, then follows the server's desired state with one
// supervisor per frame, and persists what runs after every change. On exit it leaves the
// replicas running for the next run to adopt (a restart of the agent, or of the built-in cloud
// with the service, does not restart every app), unless told to stop them. Its edge (edge/)
// serves the frames by hostname while it runs; the agent tells the service where, on its first
// sync.
import type { AgentLog } from './log.ts';
import type { DesiredFrame } from './protocol.ts';
import { SyncClient } from './client.ts';
import type { FrameSupervisor, SupervisorDeps } from './supervisor.ts';
import {
  loadState,
  lockDataDir,
  saveState,
  stopForeign,
  type AgentState,
  type PersistedFrame,
} from './state.ts';
import { chooseRuntime, type RuntimeChoice } from './runtimes/choose.ts';
import { DEFAULT_START_TIMEOUT_MS } from './health.ts';
import type { AllowRule } from './egress-policy.ts';
import { join } from 'node:path';
import { startEdge, type Edge, type EdgePlane } from './edge/edge.ts';
import { wantedCertificates } from './edge/certificates.ts';
import { serviceReads } from './service-reads.ts';
import { DEFAULT_METRICS_INTERVAL_MS, MetricsSampler } from './metrics/sampler.ts';

export interface AgentOptions {
  server: string;
  token: string;
  dataDir: string;
  /** Where the edge serves frames by hostname (EDGE_HTTP_PORT); none: no edge. 0: any port. */
  edgePort?: number;
  /** The address the edge listens on; default 127.0.0.1. */
  edgeHost?: string;
  /** Where the edge serves HTTPS with the service's certificates (EDGE_HTTPS_PORT); needs
   *  edgePort. None: HTTP only. */
  edgeHttpsPort?: number;
  /** Which data plane serves the edge (EDGE_PLANE): built-in (default) or HAProxy. */
  edgePlane?: EdgePlane;
  /** Largest request body the edge passes to an app (EDGE_MAX_BODY_MB); default 100 MiB. */
  edgeMaxBodyBytes?: number;
  gitBaseUrl: string;
  log: AgentLog;
  stopFramesOnExit?: boolean;
  /** How frames run (runtimes/choose.ts); default auto. */
  runtime?: RuntimeChoice;
  /** Directories apps must never read, besides the agent's data (the service's DATA_DIR). */
  hide?: string[];
  baseImage?: string;
  memoryMb?: number;
  cpus?: number;
  /** swarm: where images are pushed for every node to pull. */
  registry?: string;
  /** Addresses builds may reach besides public ones (BUILD_EGRESS_ALLOW). */
  egressAllow?: AllowRule[];
  /** Strangers' code runs here (runtimes/choose.ts). */
  strangers?: boolean;
  startTimeoutMs?: number;
  /** Builds of a frame's releases kept to roll back to (RELEASES_KEPT; 5). */
  releasesKept?: number;
  /** How often the agent samples what replicas use and the edge answered
   *  (METRICS_INTERVAL_SECONDS; 10 s); 0: never. */
  metricsIntervalMs?: number;
}

export interface RunningAgent {
  /** Ends the sync loop; the frames keep running (or stop, with stopFramesOnExit). */
  stop(): Promise<void>;
  readonly client: SyncClient;
  readonly edge: Edge;
}

/** A frame with something running: a replica, or a swarm service or Deployment meant to run. */
const runs = (p: PersistedFrame) =>
  p.sets.some((s) => s.replicas.length > 0) ||
  (!!(p.swarm ?? p.kubernetes) && p.spec.desired_state === 'running');

export async function startAgent(o: AgentOptions): Promise<RunningAgent> {
  const unlock = lockDataDir(o.dataDir);
  const runtime = await chooseRuntime({
    choice: o.runtime ?? 'auto',
    dataDir: o.dataDir,
    hide: o.hide ?? [],
    log: o.log,
    baseImage: o.baseImage,
    memoryMb: o.memoryMb,
    cpus: o.cpus,
    registry: o.registry,
    egressAllow: o.egressAllow,
    strangers: o.strangers,
  }).catch((err) => {
    unlock();
    throw err;
  });
  const https =
    o.edgeHttpsPort === undefined
      ? undefined
      : { port: o.edgeHttpsPort, source: serviceReads(o.server, o.token), log: o.log };
  // The edge's failures go to the frame's log once the sync client exists (just below).
  let edgeLine = (_frameId: string, _line: string) => {};
  const edge = await startEdge({
    onLine: (frameId, line) => edgeLine(frameId, line),
    host: o.edgeHost,
    port: o.edgePort,
    https,
    maxBodyBytes: o.edgeMaxBodyBytes,
    plane: o.edgePlane,
    dir: join(o.dataDir, 'edge'),
    log: o.log,
  }).catch((err) => {
    unlock();
    const held = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    const ports = [o.edgePort, ...(https ? [https.port] : [])].join(' and ');
    throw new Error(
      `the edge cannot listen on ${o.edgeHost ?? '127.0.0.1'}:${ports}: ${err.message}` +
        (held ? ' (another program holds that port: set EDGE_HTTP_PORT to a free one)' : ''),
    );
  });
  const runners = new Map<string, FrameSupervisor>();
  let saveTimer: NodeJS.Timeout | undefined;

  const snapshot = (): AgentState => {
    const frames: AgentState['frames'] = {};
    for (const [id, r] of runners) {
      const p = r.persisted();
      if (p) frames[id] = p;
    }
    return { version: 2, runtime: runtime.kind, frames };
  };
  const save = (state = snapshot()) => {
    clearTimeout(saveTimer);
    saveTimer = undefined;
    try {
      saveState(o.dataDir, state);
    } catch (err) {
      o.log.error({ err }, 'could not persist agent state');
    }
  };
  let stopped = false; // after stop, the state on disk is final: nothing may overwrite it
  const changed = () => {
    if (!stopped) saveTimer ??= setTimeout(() => save(), 200);
  };

  const client: SyncClient = new SyncClient({
    server: o.server,
    token: o.token,
    log: o.log,
    edge: edge.info,
    onAnswer: (frames) => follow(frames),
  });
  edgeLine = (frameId, line) => client.outbox.log(frameId, 0, line, 'edge');
  const deps: SupervisorDeps = {
    routes: edge.routes,
    gitBaseUrl: o.gitBaseUrl,
    log: o.log,
    startTimeoutMs: o.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    releasesKept: o.releasesKept,
    event: (e) => client.outbox.event(e),
    build: (b) => client.outbox.build(b),
    line: (frameId, replica, line, source) => client.outbox.log(frameId, replica, line, source),
    changed,
  };

  function follow(frames: DesiredFrame[]) {
    void edge.certificates?.follow(wantedCertificates(frames));
    const wanted = new Set<string>();
    for (const spec of frames) {
      wanted.add(spec.frame_id);
      let runner = runners.get(spec.frame_id);
      if (!runner) {
        runner = runtime.supervisor(spec.frame_id, deps);
        runners.set(spec.frame_id, runner);
      }
      void runner.update(spec);
    }
    for (const [id, runner] of runners) {
      if (wanted.has(id)) continue;
      o.log.info({ frame_id: id }, 'frame left this agent; stopping it');
      runners.delete(id);
      void runner.remove().then(changed);
    }
  }

  const previous = stopForeign(loadState(o.dataDir), runtime.kind);
  for (const [id, frame] of Object.entries(previous.frames)) {
    const runner = runtime.supervisor(id, deps);
    runners.set(id, runner);
    await runner.adopt(frame);
  }
  save();

  // Log offsets move without other changes; saved now and then, an adopting agent re-sends little.
  const saver = setInterval(changed, 10_000);
  saver.unref();
  const loop = client.run();
  const intervalMs = o.metricsIntervalMs ?? DEFAULT_METRICS_INTERVAL_MS;
  const sampler = new MetricsSampler({
    intervalMs,
    frames: () => runners,
    requests: edge.requests,
    send: (m) => client.outbox.metrics(m),
    log: o.log,
  });
  if (intervalMs > 0) sampler.start();
  o.log.info(
    {
      server: o.server,
      data: o.dataDir,
      runtime: runtime.kind,
      adopted_frames: runners.size,
      edge: edge.info && `http://${o.edgeHost ?? '127.0.0.1'}:${edge.info.http_port}`,
      edge_https: edge.info?.https_port ?? undefined,
    },
    'agent started',
  );

  let stopping: Promise<void> | undefined;
  return {
    client,
    edge,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(saver);
        await sampler.stop();
        stopped = true;
        client.stop();
        await loop;
        if (o.stopFramesOnExit) {
          const running = Object.values(snapshot().frames).filter(runs).length;
          await Promise.all([...runners.values()].map((r) => r.shutdown()));
          save();
          await edge.close();
          await client.flush();
          unlock();
          o.log.info(
            { frames_stopped: running },
            `agent stopped; ${running} frame(s) stopped, started again on its next start`,
          );
        } else {
          const state: AgentState = { version: 2, runtime: runtime.kind, frames: {} };
          for (const [id, r] of runners) {
            const p = r.detach();
            if (p) state.frames[id] = p;
          }
          save(state);
          await edge.close();
          unlock();
          // Unreachable: this agent's edge, gone now, is what routes requests to them.
          const left = Object.values(state.frames).filter(runs).length;
          o.log.info(
            { frames_left_running: left },
            `agent stopped; ${left} frame(s) left running, unreachable until it starts again ` +
              'and adopts them',
          );
        }
      })()),
  };
}
