// The hostnames a frame may claim: DNS names, stored lower-cased in their ASCII form.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { MAX_VERIFIABLE_HOSTNAME } from './domain-verification.ts';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

// What parseHostname accepts, as the request schema's pattern (checked in
// test/http/openapi-conformance.test.ts): two or more labels, the last not all digits, one
// trailing dot allowed, any case, surrounding spaces (all trimmed: stored lower-cased, without
// the dot), at most MAX_VERIFIABLE_HOSTNAME characters without the dot and the spaces.
const SCHEMA_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
export const HOSTNAME_PATTERN =
  `^\\s*(?=\\S{1,${MAX_VERIFIABLE_HOSTNAME}}\\.?\\s*$)(?:${SCHEMA_LABEL}\\.)+` +
  `(?![0-9]+\\.?\\s*$)${SCHEMA_LABEL}\\.?\\s*$`;
export const HOSTNAME_MESSAGE =
  `must be a DNS name (like app.example.com) of at most ${MAX_VERIFIABLE_HOSTNAME} characters, ` +
  'so that its verification record fits: two or more labels of letters, digits and "-", none ' +
  'starting or ending with "-", the last not all digits; write internationalized names in ' +
  'punycode (xn--…), and no IP address, port, path or "*"';

/**
 * Normalizes a hostname (trimmed, lower-cased, one trailing dot dropped) and checks it is a DNS
 * name a frame can answer on. Returns the stored form, or why it is refused.
 */
export function parseHostname(input: string): { hostname: string } | { error: string } {
  let h = input.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === '') return { error: 'must not be empty' };
  if (/[^\p{ASCII}]/u.test(h)) {
    // Internationalized names are stored in their ASCII (punycode) form, which is what DNS holds.
    const ascii = domainToASCII(h);
    const hint = ascii ? ` (here: ${ascii})` : ' (xn--…)';
    return { error: `must be ASCII; write internationalized names in punycode${hint}` };
  }
  if (isIP(h) || isIP(h.replace(/^\[|\]$/g, ''))) {
    return { error: 'must be a domain name, not an IP address' };
  }
  // The challenge record (_frameplane-challenge.<hostname>) must itself be a valid DNS name.
  if (h.length > MAX_VERIFIABLE_HOSTNAME) {
    const most = MAX_VERIFIABLE_HOSTNAME;
    return { error: `must be at most ${most} characters, so that its verification record fits` };
  }
  const labels = h.split('.');
  if (labels.length < 2) return { error: 'must have at least two labels (like app.example.com)' };
  for (const l of labels) {
    if (l.length === 0) return { error: 'must not contain empty labels ("..")' };
    if (l.length > 63) return { error: `label "${l.slice(0, 20)}…" is longer than 63 characters` };
    if (!LABEL.test(l)) {
      const rule = 'may hold only a-z, 0-9 and "-", and must not start or end with "-"';
      return { error: `label "${l}" ${rule}` };
    }
  }
  if (/^[0-9]+$/.test(labels.at(-1) ?? ''))
    return { error: 'the last label must not be all digits' };
  return { hostname: h };
}
