// Where the edge reaches a frame's pods (src/runner/runtimes/kubernetes/endpoints.ts) and how
// a pod's log lines are told apart across follows (pod-logs.ts): tables and a property.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { readyEndpoints } from '../../../src/runner/runtimes/kubernetes/endpoints.ts';
import { laterThan, splitStamp } from '../../../src/runner/runtimes/kubernetes/pod-logs.ts';

const pod = (
  name: string,
  o: { ready?: boolean; ip?: string; deleting?: boolean } = {},
): V1Pod => ({
  metadata: { name, ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  status: {
    ...(o.ip === undefined ? { podIP: `10.0.0.${name.length}` } : o.ip ? { podIP: o.ip } : {}),
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
  },
});

describe('readyEndpoints', () => {
  it('names the Ready pods that hold a slot, in slot order, on the frame port', () => {
    const pods = [pod('b', { ip: '10.0.0.2' }), pod('a', { ip: '10.0.0.1' })];
    const slots = new Map([
      ['a', 1],
      ['b', 0],
    ]);
    expect(readyEndpoints(pods, slots, 8080)).toEqual([
      { host: '10.0.0.2', port: 8080 },
      { host: '10.0.0.1', port: 8080 },
    ]);
  });

  it.each([
    ['not Ready', pod('a', { ready: false })],
    ['being deleted', pod('a', { deleting: true })],
    ['without an address yet', pod('a', { ip: '' })],
  ])('leaves out a pod %s', (_, p) => {
    expect(readyEndpoints([p], new Map([['a', 0]]), 80)).toEqual([]);
  });

  it('leaves out a pod without a slot (a surge pod past the count is still slotted)', () => {
    expect(readyEndpoints([pod('a')], new Map(), 80)).toEqual([]);
  });
});

describe('pod log lines', () => {
  it('splits the kubelet timestamp from the line, spaces of the line kept', () => {
    expect(splitStamp('2026-11-29T10:00:00.5Z  hello  world')).toEqual({
      at: '2026-11-29T10:00:00.5Z',
      line: ' hello  world',
    });
    expect(splitStamp('2026-11-29T10:00:00Z')).toEqual({ at: '2026-11-29T10:00:00Z', line: '' });
  });

  it.each([
    ['2026-11-29T10:00:00.5Z', '2026-11-29T10:00:00.123456789Z', true],
    ['2026-11-29T10:00:00Z', '2026-11-29T10:00:00.000000001Z', false],
    ['2026-11-29T10:00:00.1Z', '2026-11-29T10:00:00.100000000Z', false],
    ['2026-11-29T10:00:01Z', '2026-11-29T10:00:00.999999999Z', true],
  ])('%s is later than %s: %s', (a, b, later) => {
    expect(laterThan(a, b)).toBe(later);
  });

  it('orders times as their instants do, whatever digits of fraction they carry', () => {
    const stamp = fc.record({
      s: fc.integer({ min: 0, max: 59 }),
      ns: fc.integer({ min: 0, max: 999_999_999 }),
      digits: fc.integer({ min: 0, max: 9 }),
    });
    const text = (t: { s: number; ns: number; digits: number }) => {
      const frac = String(t.ns).padStart(9, '0').slice(0, t.digits);
      return `2026-11-29T10:00:${String(t.s).padStart(2, '0')}${frac ? `.${frac}` : ''}Z`;
    };
    const value = (t: { s: number; ns: number; digits: number }) =>
      t.s * 1e9 + Number(String(t.ns).padStart(9, '0').slice(0, t.digits).padEnd(9, '0') || 0);
    fc.assert(
      fc.property(stamp, stamp, (a, b) => laterThan(text(a), text(b)) === value(a) > value(b)),
      { numRuns: 500 },
    );
  });
});
