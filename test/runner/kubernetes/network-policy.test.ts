// The NetworkPolicy of a frame's pods (src/runner/runtimes/kubernetes/network-policy.ts): in on
// its port only; out to what the builds' egress policy lets out (egress-policy.ts), never to the
// cluster's ranges. The ranges are written out there; a property checks them against
// egress-policy.ts over the whole IPv4 space and over IPv6, so the two cannot drift apart.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { refusal } from '../../../src/runner/egress-policy.ts';
import { framePolicy } from '../../../src/runner/runtimes/kubernetes/objects/network-policy.ts';
import { LABELS } from '../../../src/runner/runtimes/kubernetes/names.ts';

const FRAME = 'frm_01JD5ZQ8X3T9V7K2M4N6P8R0S1';
const policy = (clusterCidrs: string[] = []) =>
  framePolicy({ frameId: FRAME, namespace: 'fp-prj-1', port: 3000, clusterCidrs });

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];
const inRange = (ip: ipaddr.IPv4 | ipaddr.IPv6, r: Range) =>
  ip.kind() === r[0].kind() && ip.match(r as [typeof ip, number]);

/** What the policy's address rule lets a pod connect to (as a network plugin reads it). */
function egressOf(p: V1NetworkPolicy): (address: string) => boolean {
  const blocks = (p.spec?.egress?.[0]?.to ?? []).flatMap((t) =>
    t.ipBlock
      ? [
          {
            cidr: ipaddr.parseCIDR(t.ipBlock.cidr),
            except: (t.ipBlock.except ?? []).map((e) => ipaddr.parseCIDR(e)),
          },
        ]
      : [],
  );
  return (address) => {
    const ip = ipaddr.parse(address);
    return blocks.some((b) => inRange(ip, b.cidr) && !b.except.some((e) => inRange(ip, e)));
  };
}
const letsOut = (p: V1NetworkPolicy, address: string) => egressOf(p)(address);

describe('the network policy', () => {
  it('lets in on the frame port only, for the frame pods, owned when told', () => {
    const owner = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'fp-x', uid: 'u' }];
    const p = framePolicy({ frameId: FRAME, namespace: 'n', port: 8080, clusterCidrs: [] }, owner);
    expect(p.metadata?.ownerReferences).toEqual(owner);
    expect(policy().metadata?.ownerReferences).toBeUndefined();
    expect(p.spec?.podSelector?.matchLabels).toEqual({ [LABELS.frame]: FRAME });
    expect(p.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(p.spec?.ingress).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }] }]);
    expect(p.spec?.egress?.[1]).toEqual({
      to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
      ports: [
        { port: 53, protocol: 'UDP' },
        { port: 53, protocol: 'TCP' },
      ],
    });
  });

  it.each([
    ['a public address', '93.184.216.34', true],
    ['the last public address before 10/8', '9.255.255.255', true],
    ['a private one', '10.0.0.1', false],
    ['another private one', '172.31.255.255', false],
    ['the first public one after 172.16/12', '172.32.0.0', true],
    ['the cloud metadata address', '169.254.169.254', false],
    ['loopback', '127.0.0.1', false],
    ['carrier-grade NAT', '100.64.0.1', false],
    ['a documentation range', '203.0.113.9', false],
    ['multicast', '224.0.0.251', false],
    ['broadcast', '255.255.255.255', false],
    ['public IPv6', '2606:4700::1111', true],
    ['IPv6 loopback', '::1', false],
    ['IPv6 unique local', 'fd00::1', false],
    ['IPv6 link-local', 'fe80::1', false],
    ['IPv4 written as IPv6', '::ffff:10.0.0.1', false],
    ['6to4', '2002:a00:1::1', false],
    ['teredo', '2001::1', false],
    ['IPv6 documentation', '2001:db8::1', false],
  ])('lets out to %s (%s): %s', (_what, address, want) => {
    expect(letsOut(policy(), address)).toBe(want);
  });

  it('keeps pods off the cluster ranges it is told of, even public ones', () => {
    const p = policy(['10.96.0.0/12', '34.118.224.0/20', '2600:1900::/44', 'fd00:10::/64']);
    expect(letsOut(policy(), '34.118.230.1')).toBe(true);
    expect(letsOut(p, '34.118.230.1')).toBe(false);
    expect(letsOut(p, '34.118.240.1')).toBe(true);
    expect(letsOut(p, '2600:1900::5')).toBe(false);
    // A range inside one refused already, or outside what is let out, adds nothing.
    const except = p.spec?.egress?.[0]?.to?.map((t) => t.ipBlock?.except ?? []);
    expect(except?.[0]).not.toContain('10.96.0.0/12');
    expect(except?.[0]).toContain('34.118.224.0/20');
    expect(except?.[1]).toContain('2600:1900::/44');
    expect(except?.[1]).not.toContain('fd00:10::/64');
  });

  it('refuses a cluster range it cannot read', () => {
    expect(() => policy(['10.96.0.0'])).toThrow(/not a CIDR/);
  });
});

describe('the address rule and the builds egress policy agree', () => {
  const v4 = fc
    .oneof(
      fc.nat({ max: 0xffffffff }),
      // Near the edges of every range, where a mistyped prefix shows.
      fc
        .tuple(fc.constantFrom(...edgesV4()), fc.integer({ min: -2, max: 2 }))
        .map(([n, d]) => Math.min(0xffffffff, Math.max(0, n + d))),
    )
    .map((n) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'));

  it('on every IPv4 address: out exactly where builds may connect', () => {
    const out = egressOf(policy());
    fc.assert(
      fc.property(v4, (address) => {
        expect(out(address)).toBe(refusal(address, 443, []) === undefined);
      }),
      { numRuns: 20_000 },
    );
  });

  const word = fc.integer({ min: 0, max: 0xffff });
  const v6 = fc
    .tuple(
      fc.oneof(word, fc.constantFrom(0x2001, 0x2002, 0x2620, 0x3fff, 0x2000, 0x3ffe, 0xfd00)),
      fc.oneof(word, fc.constantFrom(0, 1, 2, 3, 4, 0x10, 0x20, 0x30, 0x1ff, 0x200, 0xdb8, 0x4f)),
      fc.array(word, { minLength: 6, maxLength: 6 }),
    )
    .map(([a, b, rest]) => [a, b, ...rest].map((w) => w.toString(16)).join(':'));

  it('on IPv6: never out where builds may not connect', () => {
    const out = egressOf(policy());
    fc.assert(
      fc.property(v6, (address) => {
        if (out(address)) expect(refusal(address, 443, [])).toBeUndefined();
      }),
      { numRuns: 20_000 },
    );
  });
});

/**
 * The first and last address of every range ipaddr.js names (its own table, read here only to
 * aim the samples: random addresses alone would seldom land in a /24), and of the policy's.
 */
function edgesV4(): number[] {
  const table = (ipaddr.IPv4.prototype as unknown as { SpecialRanges?: object }).SpecialRanges;
  if (!table)
    throw new Error('ipaddr.js has no SpecialRanges table any more: aim the samples anew');
  const named = Object.values(table).flatMap((r) =>
    (Array.isArray(r[0]) ? r : [r]).map(([ip, bits]: Range) => `${ip.toString()}/${bits}`),
  );
  const except = policy().spec?.egress?.[0]?.to?.[0]?.ipBlock?.except ?? [];
  return [...named, ...except].flatMap((c) => {
    const [ip, bits] = ipaddr.IPv4.parseCIDR(c);
    const first = ip.toByteArray().reduce((n, b) => n * 256 + b, 0);
    return [first, first + 2 ** (32 - bits) - 1];
  });
}
