// What the agent asks of the supervisor of one frame, whatever runs it: replica runtimes
// (frame-runner.ts, on process or docker) or a whole-frame orchestrator (runtimes/swarm.ts).
import type { AgentLog } from './log.ts';
import type { BuildReport, DesiredFrame, ReplicaEventType, SyncEvent } from './protocol.ts';
import type { PersistedFrame } from './state.ts';

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
}

/** What every supervisor reports through and is told with. */
export interface SupervisorDeps {
  host: string;
  gitBaseUrl: string;
  startTimeoutMs: number;
  log: AgentLog;
  event(e: SyncEvent): void;
  build(b: BuildReport): void;
  line(frameId: string, replica: number, line: string): void;
  /** Something worth persisting changed. */
  changed(): void;
}

export type SupervisorFactory = (frameId: string, deps: SupervisorDeps) => FrameSupervisor;

export const nowIso = () => new Date().toISOString();

/**
 * A replica's event for the sync. Healthy behind a frame port that someone else holds is not
 * serving: it goes out as unhealthy with `port_in_use`, so the frame says why.
 */
export function replicaEvent(e: {
  frameId: string;
  replica: number;
  type: ReplicaEventType;
  generation: number;
  deploymentId?: string;
  detail?: Record<string, unknown>;
  portHeld: boolean;
}): SyncEvent {
  const held = e.portHeld && e.type === 'healthy';
  return {
    frame_id: e.frameId,
    replica: e.replica,
    type: held ? 'unhealthy' : e.type,
    generation: e.generation,
    ...(e.deploymentId ? { deployment_id: e.deploymentId } : {}),
    at: nowIso(),
    ...(held ? { detail: { reason: 'port_in_use' } } : e.detail ? { detail: e.detail } : {}),
  };
}
