// The uid each frame's processes run as, when the agent runs as root (process runtime). One
// uid per frame, never shared: with one uid for every tenant, each could signal, ptrace or
// read the files of every other, and one tenant's processes counted against everyone's
// RLIMIT_NPROC. The uid doubles as the gid. Allocations are kept in a file, so a frame keeps
// its uid across agent restarts (its checkouts and volumes are owned by it), and a uid is never
// given twice: files a gone frame left (a kept volume) never belong to a newer frame.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * Far above the uids of people (1000+), of the system (below 1000), of subordinate ranges
 * (100000+ in /etc/subuid) and of systemd's dynamic users (61184-65519), below 2^31 (some
 * tools read uids as signed numbers).
 */
export const FIRST_FRAME_UID = 1_000_000_000;
export const LAST_FRAME_UID = 2_000_000_000;

export interface FrameUids {
  /** The frame's uid, allocated on first use. */
  of(frameId: string): number;
  /** The frame left this agent. Its uid is not given again. */
  release(frameId: string): void;
}

interface Saved {
  next: number;
  frames: Record<string, number>;
}

const inRange = (uid: unknown): uid is number =>
  Number.isInteger(uid) && (uid as number) >= FIRST_FRAME_UID && (uid as number) <= LAST_FRAME_UID;

/** What the file holds, cleaned: only uids of the range, and a next above every one of them. */
export function parseUids(text: string | undefined): Saved {
  let raw: Partial<Saved> = {};
  try {
    raw = text ? (JSON.parse(text) as Partial<Saved>) : {};
  } catch {
    /* unreadable: start over, above nothing */
  }
  const frames = Object.fromEntries(
    Object.entries(raw.frames ?? {}).filter((e): e is [string, number] => inRange(e[1])),
  );
  const highest = Math.max(FIRST_FRAME_UID - 1, ...Object.values(frames));
  // LAST_FRAME_UID + 1 is a next too: every uid has been given, and none is given again.
  const next =
    (inRange(raw.next) || raw.next === LAST_FRAME_UID + 1) && (raw.next as number) > highest
      ? (raw.next as number)
      : highest + 1;
  return { next, frames };
}

export function frameUids(file: string): FrameUids {
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    /* none yet */
  }
  const saved = parseUids(text);
  const save = () => {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(saved), { mode: 0o600 });
    renameSync(tmp, file);
  };
  return {
    of(frameId) {
      const known = saved.frames[frameId];
      if (known !== undefined) return known;
      if (saved.next > LAST_FRAME_UID) throw new Error('no frame uid left');
      const uid = saved.next++;
      saved.frames[frameId] = uid;
      save();
      return uid;
    },
    release(frameId) {
      if (!(frameId in saved.frames)) return;
      delete saved.frames[frameId];
      save();
    },
  };
}
