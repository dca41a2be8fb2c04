// Where a tenant's build may connect through the agent's egress proxy (egress.ts): the public
// internet (the npm registry, a git host), never this machine, its private networks, link-local
// addresses (the cloud metadata service at 169.254.169.254) or any special range, unless the
// operator allows an address (BUILD_EGRESS_ALLOW: a private registry mirror, say). Pure.
import ipaddr from 'ipaddr.js';

/** An operator's exception: a CIDR (or one address), optionally one port only. */
export interface AllowRule {
  range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  port?: number;
}

/**
 * Parses BUILD_EGRESS_ALLOW: comma-separated `ADDRESS[/BITS][:PORT]`, IPv6 in brackets when a
 * port follows (`[fd00::1]:4873`). Throws on an entry it cannot read, naming it.
 */
export function parseAllow(text: string | undefined): AllowRule[] {
  const rules: AllowRule[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+)(?::(\d+))?$/.exec(entry);
    const [address, port] = m ? [m[1] as string, m[2]] : [entry, undefined];
    try {
      const range = address.includes('/')
        ? ipaddr.parseCIDR(address)
        : ((p) => [p, p.kind() === 'ipv4' ? 32 : 128] as AllowRule['range'])(ipaddr.parse(address));
      const n = port === undefined ? undefined : Number(port);
      if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 65535)) throw new Error('port');
      rules.push({ range: [normal(range[0]), range[1]], ...(n ? { port: n } : {}) });
    } catch {
      throw new Error(`BUILD_EGRESS_ALLOW: cannot read "${entry}" (ADDRESS[/BITS][:PORT])`);
    }
  }
  return rules;
}

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is that IPv4 address. */
function normal(a: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()
    ? (a as ipaddr.IPv6).toIPv4Address()
    : a;
}

/** Undefined when `address:port` may be reached; else why not, for the build's log. */
export function refusal(address: string, port: number, allow: AllowRule[]): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = normal(ipaddr.parse(address));
  const allowed = allow.some(
    (r) =>
      r.range[0].kind() === ip.kind() &&
      ip.match(r.range as [typeof ip, number]) &&
      (r.port === undefined || r.port === port),
  );
  if (allowed) return undefined;
  // ipaddr.js names every special range (loopback, private, linkLocal, carrierGradeNat,
  // uniqueLocal, multicast, reserved, 6to4 and the other IPv6 wrappers of IPv4...); only
  // ordinary public unicast remains.
  const range = ip.range();
  return range === 'unicast' ? undefined : `${address} is a ${range} address`;
}
