// What the agent runs, persisted in DATA_DIR/agent-state.json, so that an agent that restarts
// (crash, SIGKILL, upgrade) adopts its replicas instead of starting duplicates. Also the lock
// that keeps two agents off one data directory. The file holds each frame's last desired state,
// env included, so that it can restart a replica before reaching the server: it is 0600.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DesiredFrame } from './protocol.ts';
import { isAlive, startTimeOf } from './processes.ts';

export interface PersistedReplica {
  index: number; pid: number; start_time?: string; port: number; log_file: string; log_offset: number;
}

export interface PersistedSet {
  deployment_id: string; generation: number; dir: string; command: string; replicas: PersistedReplica[];
}

export interface PersistedFrame {
  spec: DesiredFrame;
  /** The set serving now and, during a rollout, the one replacing it (last). */
  sets: PersistedSet[];
}

export interface AgentState { version: 1; frames: Record<string, PersistedFrame> }

const FILE = 'agent-state.json';

export function loadState(dataDir: string): AgentState {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as AgentState;
    if (parsed?.version === 1 && parsed.frames && typeof parsed.frames === 'object') return parsed;
  } catch {
    // missing or unreadable: start empty
  }
  return { version: 1, frames: {} };
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
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'agent.pid');
  try {
    const [pid, start] = readFileSync(file, 'utf8').trim().split(' ');
    if (Number(pid) !== process.pid && isAlive(Number(pid), start || undefined)) {
      throw new Error(`another agent (pid ${pid}) uses ${dataDir}; stop it or choose another --data directory`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeFileSync(file, `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`);
  return () => {
    try {
      if (readFileSync(file, 'utf8').startsWith(`${process.pid} `)) writeFileSync(file, '');
    } catch { /* gone */ }
  };
}
