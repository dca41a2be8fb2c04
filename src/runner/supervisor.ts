// What the agent asks of the supervisor of one frame, whatever runs it: replica runtimes
// (frame-runner.ts, on process or docker) or a whole-frame orchestrator (runtimes/swarm.ts).
import type { AgentLog } from './log.ts';
import type { BuildReport, DesiredFrame, SyncEvent } from './protocol.ts';
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
