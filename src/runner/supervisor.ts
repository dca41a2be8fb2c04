// What the agent asks of the supervisor of one frame, whatever runs it: replica runtimes
// (frame-runner.ts, on process or docker) or a whole-frame orchestrator (runtimes/swarm/frame.ts).
import type { AgentLog } from './log.ts';
import type { BuildReport, DesiredFrame, ReplicaEventType, SyncEvent } from './protocol.ts';
import type { PersistedFrame } from './state.ts';
import type { Routes } from './edge/edge.ts';
import type { FrameRoute } from './edge/table.ts';
import type { Endpoint, Usage } from './runtimes/runtime.ts';

/** An instance of a replica running now, for the metrics sampler (metrics/sampler.ts). */
export interface RunningInstance {
  index: number;
  /** Its own id (a container's, a process's, a swarm task's): its counters are its own. */
  id: string;
  usage(): Promise<Usage | undefined>;
}

/** What a frame runs now, for the metrics: its replicas' instances, and the restarts its
 *  supervisor made so far per replica index (a running count, from the supervisor's start). */
export interface FrameRunning {
  instances: RunningInstance[];
  restarts: ReadonlyMap<number, number>;
}

export interface FrameSupervisor {
  /** Applies a desired state from the server (a no-op when nothing changed). */
  update(spec: DesiredFrame): Promise<void>;
  /** The frame left this agent (deleted or moved): stop it and remove what it left. */
  remove(): Promise<void>;
  /** The agent exits: leave the frame running for the next agent to adopt. */
  detach(): PersistedFrame | undefined;
  /** Stops everything, reporting it (the agent exits with --stop-frames-on-exit). */
  shutdown(): Promise<void>;
  persisted(): PersistedFrame | undefined;
  /** Takes over what an earlier agent left running. */
  adopt(p: PersistedFrame): Promise<void>;
  running(): FrameRunning;
}

/** What every supervisor reports through and is told with. */
export interface SupervisorDeps {
  /** The edge's routing table: each supervisor keeps its frame's route in it. */
  routes: Routes;
  gitBaseUrl: string;
  startTimeoutMs: number;
  log: AgentLog;
  event(e: SyncEvent): void;
  build(b: BuildReport): void;
  /** A line of the frame's log: the app's (its replicas' output, the agent's notes on them)
   *  unless told it is the build's. */
  line(frameId: string, replica: number, line: string, source?: 'app' | 'build'): void;
  /** Something worth persisting changed. */
  changed(): void;
  /** Builds of a frame's releases kept to roll back to, the serving one's included (5). */
  releasesKept?: number;
}

/** Releases whose builds a supervisor keeps per frame unless told otherwise (RELEASES_KEPT). */
export const RELEASES_KEPT = 5;

export type SupervisorFactory = (frameId: string, deps: SupervisorDeps) => FrameSupervisor;

export const nowIso = () => new Date().toISOString();

/**
 * The frame's route at the edge: its hostname and verified domains; stopped, suspended (for
 * billing: the server then also says stopped), or running over these replicas.
 */
/** The names a frame answers to: its hostname and its domains. */
export const frameHosts = (spec: DesiredFrame): string[] =>
  // A desired state from a service older than the edge has no hostname: its domains only.
  [spec.hostname, ...(spec.domains ?? [])].filter((h): h is string => !!h);

export function routeOf(frameId: string, spec: DesiredFrame, upstreams: Endpoint[]): FrameRoute {
  const running = spec.desired_state === 'running';
  return {
    frameId,
    hosts: frameHosts(spec),
    state: spec.suspended ? 'suspended' : running ? 'running' : 'stopped',
    upstreams: running ? upstreams : [],
  };
}

/** A replica's event for the sync. */
export function replicaEvent(e: {
  frameId: string;
  replica: number;
  type: ReplicaEventType;
  generation: number;
  deploymentId?: string;
  detail?: Record<string, unknown>;
}): SyncEvent {
  return {
    frame_id: e.frameId,
    replica: e.replica,
    type: e.type,
    generation: e.generation,
    ...(e.deploymentId ? { deployment_id: e.deploymentId } : {}),
    at: nowIso(),
    ...(e.detail ? { detail: e.detail } : {}),
  };
}
