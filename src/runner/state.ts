// What the agent runs, persisted in DATA_DIR/agent-state.json, so that an agent that restarts
// (crash, SIGKILL, upgrade) adopts its replicas instead of starting duplicates. Also the lock
// that keeps two agents off one data directory. The file holds each frame's last desired state,
// env included, so that it can restart a replica before reaching the server: it is 0600.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DesiredFrame } from './protocol.ts';
import type { Release, ReplicaRef } from './runtimes/runtime.ts';
import { signalOwnGroup } from './processes.ts';
import { describeHolder, takePidLock } from '../pid-lock.ts';

export interface PersistedSet {
  deployment_id: string;
  generation: number;
  release: Release;
  replicas: Array<{ index: number; ref: ReplicaRef }>;
}

/** The image and env a whole-frame runtime (swarm, kubernetes) sent for a frame. */
export interface ImageRelease {
  release: Release;
  env: Record<string, string>;
}

/** An ImageRelease as saved, with the release that served when it was sent (until it took over). */
export type SavedImageRelease = ImageRelease & { previous?: ImageRelease };

export interface PersistedFrame {
  spec: DesiredFrame;
  /** The set serving now and, during a rollout, the one replacing it (last). */
  sets: PersistedSet[];
  /** Deployments that failed here (their build, or a new release while another served). */
  failed_deployments?: string[];
  /** The same, as an agent before failed_deployments wrote it (failed builds only). */
  failed_builds?: string[];
  /** Builds of the releases that served, newest first, kept to roll back to (issue 36). */
  kept_releases?: Release[];
  /** The swarm runtime's image and env (runtimes/swarm/frame.ts): the service itself lives in the swarm. */
  swarm?: SavedImageRelease;
  /** The kubernetes runtime's, as swarm's (runtimes/kubernetes/frame.ts). */
  kubernetes?: SavedImageRelease;
}

export interface AgentState {
  version: 2;
  runtime: string;
  frames: Record<string, PersistedFrame>;
}

const FILE = 'agent-state.json';

/** The first format (process replicas only), still read so an upgraded agent adopts what runs. */
interface V1 {
  version: 1;
  frames: Record<
    string,
    {
      spec: DesiredFrame;
      sets: Array<{
        deployment_id: string;
        generation: number;
        dir: string;
        command: string;
        replicas: Array<{
          index: number;
          pid: number;
          start_time?: string;
          port: number;
          log_file: string;
          log_offset: number;
        }>;
      }>;
    }
  >;
}

function fromV1(v1: V1): AgentState {
  const frames: AgentState['frames'] = {};
  for (const [id, f] of Object.entries(v1.frames)) {
    frames[id] = {
      spec: f.spec,
      sets: f.sets.map((s) => ({
        deployment_id: s.deployment_id,
        generation: s.generation,
        release: {
          deploymentId: s.deployment_id,
          artifact: s.dir,
          command: s.command,
          commitSha: '',
        },
        replicas: s.replicas.map((r) => ({
          index: r.index,
          ref: {
            id: String(r.pid),
            startTime: r.start_time,
            endpoint: { host: '127.0.0.1', port: r.port },
            cursor: `${r.log_file}:${r.log_offset}`,
          },
        })),
      })),
    };
  }
  return { version: 2, runtime: 'process', frames };
}

export function loadState(dataDir: string): AgentState {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as AgentState | V1;
    if (parsed?.version === 1 && parsed.frames && typeof parsed.frames === 'object')
      return fromV1(parsed);
    if (parsed?.version === 2 && parsed.frames && typeof parsed.frames === 'object') return parsed;
  } catch {
    // missing or unreadable: start empty
  }
  return { version: 2, runtime: '', frames: {} };
}

/**
 * Replicas left by an agent of another runtime cannot be adopted: processes of the process
 * runtime are stopped (only if provably the same process group), containers are left to the
 * Engine.
 */
export function stopForeign(state: AgentState, runtime: string) {
  if (!state.runtime || state.runtime === runtime) return state;
  if (state.runtime === 'process') {
    for (const f of Object.values(state.frames)) {
      for (const s of f.sets)
        for (const r of s.replicas) signalOwnGroup(Number(r.ref.id), r.ref.startTime, 'SIGTERM');
    }
  }
  return {
    ...state,
    runtime,
    frames: Object.fromEntries(
      Object.entries(state.frames).map(([id, f]) => [id, { ...f, sets: [] }]),
    ),
  };
}

/** Written to a temporary file and renamed, so a crash never leaves half a file. */
export function saveState(dataDir: string, state: AgentState) {
  const file = join(dataDir, FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 1), { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Takes DATA_DIR/agent.pid for this process. Refuses if another live agent holds it: two agents
 * on one directory would each start the frames.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return takePidLock(join(dataDir, 'agent.pid'), (h) => {
    const who = describeHolder(h);
    return `another agent (${who}) uses ${dataDir}; stop it or choose another --data directory`;
  });
}
