// The roster memo's own rules (src/teams/member-rosters.ts), on a loader the test controls:
// when a roster is read, what it serves, what it keeps within its bound.
import { describe, expect, it } from 'vitest';
import {
  createMemberRosters,
  type RosterEntry,
  type RosterRead,
} from '../../src/teams/member-rosters.ts';
import fc from 'fast-check';
import { decodeCursor, encodeCursor } from '../../src/paging.ts';

/** The i-th member's key: its join time, then its id (the members service's keys). */
const keyOf = (i: number, team = 't') => [
  new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  `${team}${i}`,
];
const roster = (
  version: number,
  n: number,
  team = 't',
): RosterRead<RosterEntry<{ id: string }>> => ({
  version,
  members: Array.from({ length: n }, (_, i) => ({
    item: { id: `${team}${i}` },
    key: keyOf(i, team),
  })),
});

function loader(reads: Record<string, RosterRead<RosterEntry<{ id: string }>>>) {
  const calls: string[] = [];
  const load = async (teamId: string) => {
    calls.push(teamId);
    const read = reads[teamId];
    if (!read) throw new Error(`no team ${teamId}`);
    return read;
  };
  return { calls, load };
}

/** The loader's members are entries already. */
const asIs = <T>(m: RosterEntry<T>) => m;

const ids = (text: Buffer | undefined) =>
  text === undefined
    ? undefined
    : (JSON.parse(text.toString()).data as Array<{ id: string }>).map((m) => m.id);

describe('member rosters', () => {
  it('are read on the second miss of a team of a page or two, once, and serve any page of their version', async () => {
    const { calls, load } = loader({ t: roster(3, 5) });
    const r = createMemberRosters(load, asIs);
    r.missed('t', 3, 50, 50);
    expect(calls).toEqual([]);
    r.missed('t', 3, 50, 50);
    r.missed('t', 3, 50, 50); // a read in flight is not started again
    await r.settled();
    expect(calls).toEqual(['t']);
    expect(r.has('t')).toBe(true);
    expect(ids(r.page('t', 3, 2))).toEqual(['t0', 't1']);
    expect(JSON.parse(String(r.page('t', 3, 2, keyOf(1))))).toEqual({
      data: [{ id: 't2' }, { id: 't3' }],
      next_cursor: encodeCursor(keyOf(3)),
    });
    expect(JSON.parse(String(r.page('t', 3, 2, keyOf(4))))).toEqual({
      data: [],
      next_cursor: null,
    });
    // Another version, or a cursor naming no member it holds: not served.
    expect(r.page('t', 4, 2)).toBeUndefined();
    expect(r.page('t', 3, 2, [keyOf(1)[0] as string, 'x'])).toBeUndefined();
    expect(r.page('t', 3, 2, keyOf(5))).toBeUndefined();
  });

  it('of thousands of members are built a slice at a time, letting other work run between', async () => {
    const { load } = loader({ t: roster(1, 5000) });
    const r = createMemberRosters(load, asIs);
    r.missed('t', 1, 2500, 5000);
    r.missed('t', 1, 2500, 5000);
    // Timers that fire while the roster is built: none would, were it built in one piece.
    let ticks = 0;
    const tick = setInterval(() => ticks++, 0);
    await r.settled();
    clearInterval(tick);
    expect(ticks).toBeGreaterThan(0);
    expect(ids(r.page('t', 1, 2, keyOf(4997)))).toEqual(['t4998', 't4999']);
  });

  it('make each member read an entry in its own slice, not all of them before the first', async () => {
    const n = 5000;
    const read = { version: 1, members: Array.from({ length: n }, (_, i) => i) };
    let made = 0;
    const r = createMemberRosters(
      async () => read,
      (i: number) => {
        made++;
        return { item: { id: `t${i}` }, key: keyOf(i) };
      },
    );
    r.missed('t', 1, 2500, n);
    r.missed('t', 1, 2500, n);
    // What timers firing during the build saw: some members made, not yet all.
    const seen: number[] = [];
    const tick = setInterval(() => seen.push(made), 0);
    await r.settled();
    clearInterval(tick);
    expect(seen.some((m) => m > 0 && m < n)).toBe(true);
    expect(made).toBe(n);
    expect(ids(r.page('t', 1, 2, keyOf(4997)))).toEqual(['t4998', 't4999']);
  });

  it('serve pages of members whose JSON is not ASCII, cut at the right bytes', async () => {
    const names = ['Zoë', '李雷', 'plain', '🚀 launch', 'e\u0301'];
    const read = {
      version: 1,
      members: names.map((name, i) => ({
        item: { id: `m${i}`, name },
        key: ['2026-01-01T00:00:00.000Z', `m${i}`],
      })),
    };
    const r = createMemberRosters(async () => read, asIs);
    r.missed('t', 1, 3, 5);
    r.missed('t', 1, 3, 5);
    await r.settled();
    const cursorAfter = (i: number) => ['2026-01-01T00:00:00.000Z', `m${i}`];
    const page = (after?: string[]) =>
      JSON.parse(String(r.page('t', 1, 2, after))) as { data: Array<{ name: string }> };
    expect(page().data.map((m) => m.name)).toEqual(['Zoë', '李雷']);
    expect(page(cursorAfter(1)).data.map((m) => m.name)).toEqual(['plain', '🚀 launch']);
    expect(page(cursorAfter(3)).data.map((m) => m.name)).toEqual(['e\u0301']);
  });

  it('of a larger team are read once the pages read from the database add up to its size', async () => {
    const { calls, load } = loader({ t: roster(1, 500) });
    const r = createMemberRosters(load, asIs);
    for (let page = 1; page < 10; page++) {
      r.missed('t', 1, 50, 500);
      await r.settled();
    }
    expect(calls).toEqual([]); // 450 members read in pages: renting still costs less
    r.missed('t', 1, 50, 500);
    await r.settled();
    expect(calls).toEqual(['t']);
    expect(ids(r.page('t', 1, 2))).toEqual(['t0', 't1']);
  });

  it('keep within their bound, drop the least recent, never hold a larger team', async () => {
    const { load } = loader({
      a: roster(1, 4, 'a'),
      b: roster(1, 4, 'b'),
      big: roster(1, 9),
      c: roster(1, 2, 'c'),
    });
    const r = createMemberRosters(load, asIs, { maxMembers: 8 });
    const hold = async (team: string) => {
      r.missed(team, 1, 50, 50);
      r.missed(team, 1, 50, 50);
      await r.settled();
    };
    for (const team of ['a', 'b', 'big']) await hold(team);
    expect([r.has('a'), r.has('b'), r.has('big'), r.members]).toEqual([true, true, false, 8]);
    r.page('a', 1, 1); // a is now the more recent
    await hold('c');
    expect([r.has('a'), r.has('b'), r.has('c'), r.members]).toEqual([true, false, true, 6]);
  });

  it('never replace a newer roster with an older read, and survive a failed read', async () => {
    const reads = { t: roster(5, 2) };
    const errors: unknown[] = [];
    const r = createMemberRosters(loader(reads).load, asIs, { onError: (e) => errors.push(e) });
    r.missed('t', 5, 50, 50);
    r.missed('t', 5, 50, 50);
    await r.settled();
    expect(r.page('t', 5, 10)).toBeDefined();
    reads.t = roster(4, 3); // a slower replica's answer, say
    r.missed('t', 6, 50, 50);
    r.missed('t', 6, 50, 50);
    await r.settled();
    expect(r.page('t', 5, 10)).toBeDefined();
    expect(r.members).toBe(2);
    const failing = createMemberRosters(loader({}).load, asIs, { onError: (e) => errors.push(e) });
    failing.missed('u', 1, 50, 50);
    failing.missed('u', 1, 50, 50);
    await failing.settled();
    expect(failing.has('u')).toBe(false);
    expect(errors).toHaveLength(1);
  });

  it('walk any team by their next cursors, each member once and in order, from any member', async () => {
    // Members as the members service keys them: join times in order, ties broken by user id.
    const team = fc
      .array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.stringMatching(/^usr_[0-9A-Z]{4}$/)), {
        maxLength: 60,
      })
      .map((drawn) => {
        const seen = new Set<string>();
        const members = drawn
          .filter(([, id]) => !seen.has(id) && seen.add(id))
          .map(([t, id]) => ({ at: new Date(Date.UTC(2026, 0, 1, 0, 0, t)).toISOString(), id }))
          .sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1));
        return members.map((m) => ({ item: { id: m.id }, key: [m.at, m.id] }));
      });
    await fc.assert(
      fc.asyncProperty(team, fc.integer({ min: 1, max: 7 }), async (members, limit) => {
        const r = createMemberRosters(async () => ({ version: 1, members }), asIs);
        r.missed('t', 1, 1, 1);
        r.missed('t', 1, 1, 1);
        await r.settled();
        const walked: string[] = [];
        let after: string[] | undefined;
        do {
          const page = JSON.parse(String(r.page('t', 1, limit, after)));
          walked.push(...page.data.map((m: { id: string }) => m.id));
          after = page.next_cursor === null ? undefined : decodeCursor(page.next_cursor, 2);
        } while (after);
        expect(walked).toEqual(members.map((m) => m.item.id));
        members.forEach((m, i) => {
          expect(ids(r.page('t', 1, limit, m.key))).toEqual(
            members.slice(i + 1, i + 1 + limit).map((x) => x.item.id),
          );
        });
        expect(r.page('t', 1, limit, ['2026-01-01T00:00:00.000Z', 'usr_none'])).toBeUndefined();
      }),
    );
  });
});
