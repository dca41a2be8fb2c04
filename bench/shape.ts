// The statistical shape of the bench dataset, as pure functions over a seeded random source, so
// that two runs (and the large and the small dataset) are drawn the same way.

import { at } from '../test/helpers/checked.ts';

export type Random = () => number;

/** mulberry32: small, fast, and good enough to draw a dataset; the seed makes runs repeatable. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const randomInt = (random: Random, n: number) => Math.floor(random() * n);

export function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [items[i], items[j]] = [at(items, j), at(items, i)];
  }
  return items;
}

/** Picks from `choices` by weight. */
export function weighted<T>(random: Random, choices: Array<[T, number]>): T {
  let x = random() * choices.reduce((s, [, w]) => s + w, 0);
  for (const [value, w] of choices) {
    x -= w;
    if (x < 0) return value;
  }
  return at(choices, choices.length - 1)[0];
}

/**
 * `n` sizes that add up to `total`, the size at rank r proportional to 1/(r+1)^alpha (Zipf):
 * a few huge, a long tail of small ones. Each size lies in [min, max]; whatever the cap cuts
 * off goes to the next ranks, so the sum stays exact.
 */
export function zipfSizes(
  n: number,
  total: number,
  alpha: number,
  min: number,
  max: number,
): number[] {
  if (n * min > total || n * max < total)
    throw new Error(`cannot split ${total} into ${n} sizes in [${min}, ${max}]`);
  const weights = Array.from({ length: n }, (_, r) => 1 / (r + 1) ** alpha);
  const sum = weights.reduce((s, w) => s + w, 0);
  const extra = total - n * min;
  const exact = weights.map((w) => Math.min(max, min + (extra * w) / sum));
  const sizes = exact.map(Math.floor);
  let left = total - sizes.reduce((s, x) => s + x, 0);
  // Largest remainders first; what a cap refused goes to the top ranks that still have room.
  const byRemainder = exact
    .map((x, r) => [x - Math.floor(x), r] as const)
    .sort((a, b) => b[0] - a[0]);
  for (const [, r] of byRemainder)
    if (left > 0 && at(sizes, r) < max) {
      sizes[r] = at(sizes, r) + 1;
      left--;
    }
  for (let r = 0; left > 0; r = (r + 1) % n)
    if (at(sizes, r) < max) {
      sizes[r] = at(sizes, r) + 1;
      left--;
    }
  return sizes;
}

/**
 * A discrete power law on 1..max: P(k) proportional to k^-exponent. With exponent 2.3 about 70%
 * draw 1, 14% draw 2, 5% draw 3 and the mean is close to 2: most users are in one to three teams.
 */
export function powerLaw(random: Random, exponent: number, max: number): () => number {
  const cumulative: number[] = [];
  let acc = 0;
  for (let k = 1; k <= max; k++) {
    acc += k ** -exponent;
    cumulative.push(acc);
  }
  return () => {
    const x = random() * acc;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at(cumulative, mid) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

/** Count of each value, for printing a distribution: "1: 7012, 2: 1432, …". */
export function histogram(values: Iterable<number>, buckets: number[]): string {
  const counts = new Array(buckets.length).fill(0);
  for (const v of values) {
    let i = buckets.length - 1;
    while (i > 0 && v < at(buckets, i)) i--;
    counts[i]++;
  }
  const label = (i: number) =>
    i === buckets.length - 1
      ? `${buckets[i]}+`
      : at(buckets, i + 1) - at(buckets, i) === 1
        ? `${buckets[i]}`
        : `${buckets[i]}-${at(buckets, i + 1) - 1}`;
  return buckets.map((_, i) => `${label(i)}: ${counts[i]}`).join(', ');
}
