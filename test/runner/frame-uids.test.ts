// Each frame runs as a uid of its own, kept across agent restarts and never given twice
// (src/runner/runtimes/frame-uids.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FIRST_FRAME_UID,
  LAST_FRAME_UID,
  frameUids,
  parseUids,
} from '../../src/runner/runtimes/frame-uids.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fp-uids-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('frame uids', () => {
  it('gives each frame its own, keeps it across restarts, and never gives one twice', () => {
    const file = join(tmp, 'uids.json');
    const a = frameUids(file);
    const ann = a.of('frm_ann');
    const bob = a.of('frm_bob');
    expect(ann).toBe(FIRST_FRAME_UID);
    expect(bob).toBe(FIRST_FRAME_UID + 1);
    expect(a.of('frm_ann')).toBe(ann);
    a.release('frm_ann');
    const b = frameUids(file); // the agent restarted
    expect(b.of('frm_bob')).toBe(bob);
    expect(b.of('frm_carol')).toBe(FIRST_FRAME_UID + 2);
    expect(b.of('frm_ann')).toBe(FIRST_FRAME_UID + 3); // back, with a new uid
  });

  it.each([
    ['missing', undefined, { next: FIRST_FRAME_UID, frames: {} }],
    ['unreadable', '{oops', { next: FIRST_FRAME_UID, frames: {} }],
    [
      'uids out of range dropped',
      JSON.stringify({ next: 5, frames: { a: 0, b: 65534, c: FIRST_FRAME_UID + 7 } }),
      { next: FIRST_FRAME_UID + 8, frames: { c: FIRST_FRAME_UID + 7 } },
    ],
    [
      'a next below a held uid raised',
      JSON.stringify({ next: FIRST_FRAME_UID, frames: { a: FIRST_FRAME_UID + 2 } }),
      { next: FIRST_FRAME_UID + 3, frames: { a: FIRST_FRAME_UID + 2 } },
    ],
    [
      'exhausted: stays so',
      JSON.stringify({ next: LAST_FRAME_UID + 1, frames: {} }),
      { next: LAST_FRAME_UID + 1, frames: {} },
    ],
  ])('reads a table that is %s', (_what, text, want) => {
    expect(parseUids(text)).toEqual(want);
  });

  it('refuses to go past the range', () => {
    const file = join(tmp, 'full.json');
    writeFileSync(file, JSON.stringify({ next: LAST_FRAME_UID, frames: {} }));
    const u = frameUids(file);
    expect(u.of('frm_last')).toBe(LAST_FRAME_UID);
    expect(() => u.of('frm_more')).toThrow(/no frame uid left/);
  });
});
