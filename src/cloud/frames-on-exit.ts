// FRAMES_ON_EXIT: what the built-in cloud's frames do when the service stops. Its agent's proxy
// is what makes a frame reachable, so a frame left running is unreachable until the next start
// adopts it (docs/operations.md, Stopping).
// - A person who ran `npm start` in a terminal expects Ctrl-C to stop what it started, as
//   `docker compose up` does in the foreground: `auto` stops the frames when stdin is a TTY.
// - A service manager that restarts the control plane must not restart every app (dockerd's
//   live-restore): otherwise `auto` keeps them running, for the next start to adopt.
// `stop` and `keep` force either.
import type { FramesOnExit } from '../config.ts';

/** Whether the built-in agent stops its frames when it exits. */
export function stopsFramesOnExit(setting: FramesOnExit, terminal: boolean): boolean {
  if (setting === 'auto') return terminal;
  return setting === 'stop';
}

/** What the agent's last line ('agent stopped') reports about its frames. */
export type AgentExit = { frames_stopped: number } | { frames_left_running: number };

export function agentExitOf(fields: Record<string, unknown>): AgentExit | undefined {
  const { frames_stopped: stopped, frames_left_running: left } = fields;
  if (typeof stopped === 'number') return { frames_stopped: stopped };
  if (typeof left === 'number') return { frames_left_running: left };
  return undefined;
}

/** "1 frame of the built-in cloud was", "2 frames of the built-in cloud were". */
const frames = (n: number, was: 'was' | 'is') =>
  n === 1
    ? `1 frame of the built-in cloud ${was}`
    : `${n} frames of the built-in cloud ${was === 'was' ? 'were' : 'are'}`;

/** The service's last log line: what became of the built-in cloud's frames. */
export function stoppedLine(exit: AgentExit | undefined): {
  level: 'info' | 'warn';
  fields: AgentExit | Record<string, never>;
  msg: string;
} {
  if (exit && 'frames_left_running' in exit && exit.frames_left_running > 0) {
    const n = exit.frames_left_running;
    return {
      level: 'warn',
      fields: exit,
      msg:
        `Frameplane stopped; ${frames(n, 'is')} left running, unreachable ` +
        'until Frameplane starts again and adopts them (FRAMES_ON_EXIT=stop stops them)',
    };
  }
  if (exit && 'frames_stopped' in exit && exit.frames_stopped > 0) {
    const n = exit.frames_stopped;
    return {
      level: 'info',
      fields: exit,
      msg: `Frameplane stopped; ${frames(n, 'was')} stopped, to start again on the next start`,
    };
  }
  return { level: 'info', fields: {}, msg: 'Frameplane stopped' };
}
