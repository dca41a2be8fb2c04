// Which replica each pod of a Deployment reports as (src/runner/runtimes/kubernetes/slots.ts):
// a rollout, a replacement and a scale-down walked through, and properties of the rule over any
// pods and any earlier assignment.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { assignSlots, holdsSlot } from '../../../src/runner/runtimes/kubernetes/slots.ts';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const pod = (
  name: string,
  createdS: number,
  extra: { deleting?: boolean; phase?: string } = {},
): V1Pod => ({
  metadata: {
    name,
    creationTimestamp: new Date(T0 + createdS * 1000),
    ...(extra.deleting ? { deletionTimestamp: new Date(T0 + 999_000) } : {}),
  },
  status: { phase: extra.phase ?? 'Running' },
});
const asObject = (m: Map<string, number>) => Object.fromEntries(m);

describe('slots', () => {
  it('gives new pods the lowest slots, oldest first, then by name', () => {
    const pods = [pod('c', 2), pod('b', 1), pod('a', 2)];
    expect(asObject(assignSlots(pods, new Map(), 3))).toEqual({ b: 0, a: 1, c: 2 });
  });

  it('reads creation times written as text, and puts a pod without one first', () => {
    const text = {
      metadata: { name: 'x', creationTimestamp: '2026-11-29T10:00:05Z' },
    } as unknown as V1Pod;
    const none: V1Pod = { metadata: { name: 'y' } };
    expect(asObject(assignSlots([text, pod('w', 1), none], new Map(), 3))).toEqual({
      y: 0,
      w: 1,
      x: 2,
    });
  });

  it('walks a rollout of three: the extra pod moves down as old pods go, full at the end', () => {
    let slots = assignSlots([pod('a0', 0), pod('a1', 0), pod('a2', 0)], new Map(), 3);
    expect(asObject(slots)).toEqual({ a0: 0, a1: 1, a2: 2 });
    const steps: Array<[V1Pod[], Record<string, number>]> = [
      [[pod('a0', 0), pod('a1', 0), pod('a2', 0), pod('b0', 10)], { a0: 0, a1: 1, a2: 2, b0: 3 }],
      [
        [pod('a0', 0, { deleting: true }), pod('a1', 0), pod('a2', 0), pod('b0', 10)],
        { b0: 0, a1: 1, a2: 2 },
      ],
      [[pod('a1', 0), pod('a2', 0), pod('b0', 10), pod('b1', 20)], { b0: 0, a1: 1, a2: 2, b1: 3 }],
      [
        [pod('a1', 0, { deleting: true }), pod('a2', 0), pod('b0', 10), pod('b1', 20)],
        { b0: 0, b1: 1, a2: 2 },
      ],
      [[pod('a2', 0), pod('b0', 10), pod('b1', 20), pod('b2', 30)], { b0: 0, b1: 1, a2: 2, b2: 3 }],
      [[pod('b0', 10), pod('b1', 20), pod('b2', 30)], { b0: 0, b1: 1, b2: 2 }],
    ];
    for (const [pods, want] of steps) {
      slots = assignSlots(pods, slots, 3);
      expect(asObject(slots)).toEqual(want);
    }
  });

  it('puts a replacement where the pod it replaces was', () => {
    const before = new Map([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
    const evicted = [pod('a', 0), pod('b', 0, { phase: 'Failed' }), pod('c', 0), pod('d', 50)];
    expect(asObject(assignSlots(evicted, before, 3))).toEqual({ a: 0, c: 2, d: 1 });
  });

  it('after a scale-down, moves the pods left into the slots that count', () => {
    const before = new Map([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
    const left = [pod('a', 0, { deleting: true }), pod('c', 0), pod('b', 0, { deleting: true })];
    expect(asObject(assignSlots(left, before, 1))).toEqual({ c: 0 });
  });

  it.each([
    ['being deleted', false, pod('x', 0, { deleting: true })],
    ['failed', false, pod('x', 0, { phase: 'Failed' })],
    ['succeeded', false, pod('x', 0, { phase: 'Succeeded' })],
    ['pending', true, pod('x', 0, { phase: 'Pending' })],
    ['without a name', false, { metadata: {} }],
  ])('a pod %s holds a slot: %s', (_what, want, p) => {
    expect(holdsSlot(p)).toBe(want);
  });
});

const anyPods = fc.uniqueArray(
  fc.record({
    name: fc.constantFrom(...'abcdefghij'),
    created: fc.integer({ min: 0, max: 5 }),
    deleting: fc.boolean(),
    phase: fc.constantFrom('Pending', 'Running', 'Running', 'Failed'),
  }),
  { selector: (p) => p.name, maxLength: 10 },
);
const anyPrevious = fc.dictionary(
  fc.constantFrom(...'abcdefghij'),
  fc.integer({ min: -1, max: 12 }),
);

describe('whatever the pods', () => {
  it('gives each live pod a slot of its own, those that count first; held ones stay', () => {
    fc.assert(
      fc.property(anyPods, anyPrevious, fc.integer({ min: 0, max: 10 }), (shapes, prev, count) => {
        const pods = shapes.map((s) => pod(s.name, s.created, s));
        const previous = new Map(Object.entries(prev));
        const slots = assignSlots(pods, previous, count);
        const live = pods.filter(holdsSlot).map((p) => p.metadata?.name);
        expect([...slots.keys()].sort()).toEqual([...live].sort());
        const values = [...slots.values()];
        expect(new Set(values).size).toBe(values.length);
        expect(values.every((v) => Number.isInteger(v) && v >= 0)).toBe(true);
        // Slots below replica_count are full when there are enough pods: none waits beyond
        // them while one of them is free.
        if (live.length >= count) for (let i = 0; i < count; i++) expect(values).toContain(i);
        if (values.some((v) => v >= count))
          for (let i = 0; i < count; i++) expect(values).toContain(i);
        // A pod keeps a slot that counts; the first of two claiming one keeps it.
        const kept = new Set<number>();
        for (const [name, held] of previous)
          if (slots.has(name) && held >= 0 && held < count && !kept.has(held)) {
            const holders = [...previous].filter(([n, h]) => h === held && slots.has(n));
            if (holders.length === 1) expect(slots.get(name)).toBe(held);
            kept.add(held);
          }
        // Stable: the same pods again change nothing.
        expect(assignSlots(pods, slots, count)).toEqual(slots);
      }),
      { numRuns: 2000 },
    );
  });
});
