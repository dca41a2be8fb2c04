// Where a notification may be sent: an https:// URL (http:// when the operator allows it) whose
// host is a public address, never this machine, its networks or the cloud's metadata service
// (169.254.169.254), unless the operator allows private receivers. Pure: the URL as written is
// checked when an endpoint is saved, and every address its host resolves to when a delivery
// connects (send.ts), since a name may point anywhere, and anywhere else tomorrow.
import ipaddr from 'ipaddr.js';

export interface AddressRules {
  /** NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES. */
  allowPrivate: boolean;
  /** NOTIFICATIONS_ALLOW_HTTP. */
  allowHttp: boolean;
}

/**
 * Ranges an operator may open with NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES (ipaddr.js' names):
 * receivers on this machine or its networks. The unspecified address (0.0.0.0 and :: reach
 * this machine on Linux), broadcast, multicast and reserved ranges stay refused: nobody runs
 * a web server there, and a guard that lets them through is one an attacker uses.
 */
const PRIVATE_RANGES = new Set([
  'loopback',
  'private',
  'linkLocal',
  'uniqueLocal',
  'carrierGradeNat',
]);

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address (this machine)',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique local (private) IPv6 address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
};

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is that IPv4 address. */
function normal(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}

/** Why `address` may not be connected to; undefined when it may. */
export function addressRefusal(address: string, allowPrivate: boolean): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = normal(address);
  const range = ip.range();
  if (range === 'unicast') return undefined;
  if (allowPrivate && PRIVATE_RANGES.has(range)) return undefined;
  const what = RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
  const hint = PRIVATE_RANGES.has(range)
    ? ' (the operator may allow such receivers: NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES)'
    : '';
  // A mapped address reads as the IPv4 one it stands for.
  const shown = ip.kind() === 'ipv4' && address.includes(':') ? `${address} (${ip})` : address;
  return `${shown} is ${what}: notifications are not sent there${hint}`;
}

/** The host of a URL as an address, when it is one (IPv6 without its brackets). */
export function literalAddress(host: string): string | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare))
    ? bare
    : undefined;
}

/** Names that mean this machine whatever DNS says (RFC 6761). */
const isLocalName = (host: string) => {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/**
 * Why a URL is refused as written: not http(s), plain http when only https is allowed, a user
 * name or password in it, or a host that is a refused address (or `localhost`). Undefined when
 * it may be saved; its name is checked again, resolved, at each delivery.
 */
export function urlRefusal(raw: string, rules: AddressRules): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL: send an absolute https:// URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `must be an https:// URL, not ${url.protocol}`;
  if (url.protocol === 'http:' && !rules.allowHttp)
    return 'must be an https:// URL: plain http is not allowed here (NOTIFICATIONS_ALLOW_HTTP)';
  if (url.username || url.password)
    return 'must not hold a user name or password: put a token in the path or query instead';
  // The URL parser has written 0x7f.1, 2130706433 and the like as 127.0.0.1 already.
  const literal = literalAddress(url.hostname);
  if (literal) {
    const refused = addressRefusal(literal, rules.allowPrivate);
    return refused && `is refused: ${refused}`;
  }
  if (isLocalName(url.hostname) && !rules.allowPrivate)
    return `must not point at ${url.hostname}, which is this machine`;
  return undefined;
}
