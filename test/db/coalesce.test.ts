// Coalesced writes (src/db/coalesce.ts): a write goes out at once when a statement is free;
// those that come while every statement is under way go together in the next, never two of
// one key in the same, never more than `max`; each caller gets its own answer, and one item that
// fails a batch fails only itself.
import { describe, expect, it } from 'vitest';
import { coalesced } from '../../src/db/coalesce.ts';

interface Item {
  key: string;
  n: number;
}

/** A run that holds each statement until released, and records every batch it was given. */
function recorder(fails?: (item: Item) => boolean) {
  const batches: number[][] = [];
  const held: Array<() => void> = [];
  let running = 0;
  let mostRunning = 0;
  const run = async (items: Item[]) => {
    batches.push(items.map((i) => i.n));
    running++;
    mostRunning = Math.max(mostRunning, running);
    await new Promise<void>((resolve) => held.push(resolve));
    running--;
    if (fails && items.some(fails)) throw new Error(`refused ${items.map((i) => i.n)}`);
    return items.map((i) => `answer ${i.n}`);
  };
  /** Lets every statement, those yet to come included, finish. */
  const releaseAll = async () => {
    for (let quiet = 0; quiet < 3; ) {
      await new Promise((r) => setImmediate(r));
      quiet = held.length === 0 ? quiet + 1 : 0;
      for (const release of held.splice(0)) release();
    }
  };
  return { run, batches, held, releaseAll, mostRunning: () => mostRunning };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('coalesced writes', () => {
  it('send the first at once and gather those that come meanwhile, up to max', async () => {
    const r = recorder();
    const write = coalesced(r.run, { inFlight: 1, max: 3, key: (i: Item) => i.key });
    const first = write({ key: 'a', n: 0 });
    await turn();
    expect(r.batches).toEqual([[0]]);
    const later = [1, 2, 3, 4].map((n) => write({ key: `k${n}`, n }));
    await turn();
    expect(r.batches).toHaveLength(1); // the one statement is under way: the others wait
    await r.releaseAll();
    expect(await first).toBe('answer 0');
    expect(await Promise.all(later)).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 4']);
    expect(r.batches).toEqual([[0], [1, 2, 3], [4]]);
    expect(r.mostRunning()).toBe(1);
  });

  it('runs at most inFlight statements at once', async () => {
    const r = recorder();
    const write = coalesced(r.run, { inFlight: 2, max: 10, key: (i: Item) => i.key });
    const all = [write({ key: 'a', n: 0 })];
    await turn();
    all.push(write({ key: 'b', n: 1 }));
    await turn();
    for (const n of [2, 3, 4]) all.push(write({ key: `k${n}`, n }));
    await turn();
    expect(r.batches).toEqual([[0], [1]]);
    await r.releaseAll();
    await Promise.all(all);
    expect(r.batches).toEqual([[0], [1], [2, 3, 4]]);
    expect(r.mostRunning()).toBe(2);
  });

  it('never puts two writes of one key in the same statement, and keeps their order', async () => {
    const r = recorder();
    const write = coalesced(r.run, { inFlight: 1, max: 10, key: (i: Item) => i.key });
    const all = [0, 1, 2, 3, 4].map((n) => write({ key: n % 2 === 0 ? 'even' : `odd${n}`, n }));
    await r.releaseAll();
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4].map((n) => `answer ${n}`));
    expect(r.batches).toEqual([[0, 1, 3], [2], [4]]);
  });

  it('tries each write of a failed statement alone: only the one refused fails', async () => {
    const r = recorder((i) => i.n === 2);
    const write = coalesced(r.run, { inFlight: 1, max: 10, key: (i: Item) => i.key });
    const all = [0, 1, 2, 3].map((n) => write({ key: `k${n}`, n }).catch((e: Error) => e.message));
    await r.releaseAll();
    expect(await Promise.all(all)).toEqual(['answer 0', 'answer 1', 'refused 2', 'answer 3']);
    expect(r.batches).toEqual([[0, 1, 2, 3], [0], [1], [2], [3]]);
  });
});
