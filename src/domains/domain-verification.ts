// Proof of domain ownership by a DNS TXT record, as Vercel and Render ask for it. Only DNS: an
// HTTP challenge would make the service fetch hosts that tenants choose (an SSRF path). The
// resolver is injected (services.ts); tests give one that answers from a table.
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { type AppError, serviceUnavailable, unprocessable } from '../errors.ts';

/** What the service needs of DNS: the TXT records of a name, each as its character strings. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * The system's resolver (/etc/resolv.conf, or `servers`), bounded in time: each query waits
 * `timeoutMs / 2` for an answer and is tried twice; the whole look-up is cancelled after
 * `timeoutMs`.
 */
export function systemTxtResolver({
  timeoutMs = 5000,
  servers,
}: {
  timeoutMs?: number;
  servers?: string[];
} = {}): TxtResolver {
  return {
    async resolveTxt(name) {
      // One resolver per look-up, so that cancel() ends this look-up only.
      const resolver = new Resolver({ timeout: Math.ceil(timeoutMs / 2), tries: 2 });
      if (servers) resolver.setServers(servers);
      const timer = setTimeout(() => resolver.cancel(), timeoutMs);
      try {
        return await resolver.resolveTxt(name);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

const CHALLENGE_PREFIX = '_frameplane-challenge.';
const VALUE_PREFIX = 'frameplane-verify=';
/** A DNS name has at most 253 characters; the challenge name must fit too. */
export const MAX_VERIFIABLE_HOSTNAME = 253 - CHALLENGE_PREFIX.length;

/** A fresh token for a claim: 128 random bits as 32 hex digits (migration 0012 checks the form). */
export const newVerificationToken = () => randomBytes(16).toString('hex');

/** The record the owner of `hostname` publishes to prove it. */
export const challengeOf = (hostname: string, token: string) => ({
  type: 'TXT' as const,
  name: `${CHALLENGE_PREFIX}${hostname}`,
  value: `${VALUE_PREFIX}${token}`,
});

// Answers that mean "no such record": the name does not exist, or holds no TXT record.
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);
// Answers from the name's own DNS servers that its owner must fix (not ours to retry).
const BROKEN_ZONE = new Map([
  ['ESERVFAIL', 'its DNS servers failed to answer (SERVFAIL)'],
  ['EFORMERR', 'its DNS servers refused the query as malformed (FORMERR)'],
  ['EBADRESP', 'its DNS servers gave a malformed answer'],
]);
const MAX_SHOWN = 10;
const MAX_CHARS = 300;

/**
 * Looks the challenge up. Resolves when a TXT record at the challenge name holds exactly the
 * expected value (other records may sit beside it); otherwise throws 422
 * `domain_verification_failed` saying which record was expected and what was found, or 503
 * `dns_unavailable` when the look-up itself did not complete.
 */
export async function checkChallenge(dns: TxtResolver, hostname: string, token: string) {
  const want = challengeOf(hostname, token);
  let found: string[];
  try {
    found = (await dns.resolveTxt(want.name)).map((chunks) => chunks.join('').trim());
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    const broken = BROKEN_ZONE.get(code);
    if (NO_RECORD.has(code)) found = [];
    else if (broken) throw failed(want, `the look-up failed: ${broken}`);
    else {
      const why =
        `The DNS look-up of ${want.name} did not complete (${code || 'error'}); ` +
        'try again shortly.';
      throw serviceUnavailable('dns_unavailable', why, 30);
    }
  }
  if (found.includes(want.value)) return;
  const shown = found.slice(0, MAX_SHOWN).map((v) => JSON.stringify(v.slice(0, MAX_CHARS)));
  const more = found.length > MAX_SHOWN ? ` and ${found.length - MAX_SHOWN} more` : '';
  const what = `found ${found.length === 1 ? 'only' : 'only these'}: ${shown.join(', ')}${more}`;
  throw failed(want, found.length === 0 ? 'found no TXT record there' : what);
}

function failed(want: ReturnType<typeof challengeOf>, what: string): AppError {
  const message =
    `Expected a TXT record at ${want.name} with the value "${want.value}"; ${what}. ` +
    'Create that record at your DNS provider, wait for it to be visible, then verify again.';
  return unprocessable('domain_verification_failed', message, [{ path: 'verification', message }]);
}
