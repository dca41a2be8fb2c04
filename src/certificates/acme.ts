// One order at the ACME server (RFC 8555) through acme-client, whose own CI runs against Pebble:
// the account (made once per directory, its key kept sealed), a new key and CSR per host, the
// HTTP-01 challenge answered by the edges (through acme_challenges), the chain it issues.
import { X509Certificate } from 'node:crypto';
import acme from 'acme-client';
import type { Clock } from '../clock.ts';
import type { AcmeSettings } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { deleteChallenge, findAccount, saveAccount, saveChallenge } from './certificates-dal.ts';

export interface Certificate {
  /** The chain, leaf first, PEM. */
  certificate: string;
  privateKey: string;
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
}

/** SHA-256 of the chain's leaf, lower-case hex without colons. */
export function fingerprintOf(chainPem: string): string {
  return new X509Certificate(chainPem).fingerprint256.replaceAll(':', '').toLowerCase();
}

export interface Issuer {
  issue(hostname: string): Promise<Certificate>;
}

export function createIssuer(deps: {
  db: Database;
  sealer: Sealer;
  clock: Clock;
  settings: AcmeSettings;
}): Issuer {
  const { db, sealer, clock, settings } = deps;
  let client: Promise<acme.Client> | undefined;

  /** The directory's account: the one kept, else a new key (the first to be saved wins). */
  async function connect(): Promise<acme.Client> {
    let kept = await findAccount(db, settings.directoryUrl);
    if (!kept) {
      const key = (await acme.crypto.createPrivateEcdsaKey()).toString();
      kept = await saveAccount(db, {
        directoryUrl: settings.directoryUrl,
        keySealed: sealer.seal(key),
        url: null,
        now: clock.now(),
      });
    }
    if (!kept) throw new Error('the ACME account could not be kept');
    return new acme.Client({
      directoryUrl: settings.directoryUrl,
      accountKey: sealer.open(kept.account_key_sealed),
      ...(kept.account_url ? { accountUrl: kept.account_url } : {}),
    });
  }

  return {
    async issue(hostname) {
      client ??= connect();
      const c = await client.catch((err) => {
        client = undefined;
        throw err;
      });
      const [key, csr] = await acme.crypto.createCsr(
        { commonName: hostname, altNames: [hostname] },
        await acme.crypto.createPrivateEcdsaKey(),
      );
      const chain = await c.auto({
        csr,
        ...(settings.email ? { email: settings.email } : {}),
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        // Its own check fetches the challenge through this machine's resolver, which need not
        // see the names the ACME server does (a split horizon, a test's DNS): the server checks.
        skipChallengeVerification: true,
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          const now = clock.now();
          await saveChallenge(db, { token: challenge.token, hostname, keyAuthorization, now });
        },
        challengeRemoveFn: async (_authz, challenge) => deleteChallenge(db, challenge.token),
      });
      const info = acme.crypto.readCertificateInfo(chain);
      return {
        certificate: chain,
        privateKey: key.toString(),
        fingerprint: fingerprintOf(chain),
        notBefore: info.notBefore,
        notAfter: info.notAfter,
      };
    },
  };
}
