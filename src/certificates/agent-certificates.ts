// What an agent may read of the certificates (CONTRACT 5b): the certificate and key of a host
// that one of its frames serves, and the key authorization of a challenge for such a host, so
// that its edge answers the ACME server. A host it does not serve does not exist for it.
import type { Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import type { Sealer } from '../secrets.ts';
import { certificateFor, challengeFor } from './certificates-dal.ts';

export function createAgentCertificates(deps: {
  db: Queryable;
  sealer: Sealer;
  appsDomain: string;
}) {
  const { db, sealer, appsDomain } = deps;
  return {
    async certificate(agentId: string, hostname: string) {
      const row = await certificateFor(db, agentId, hostname.toLowerCase(), appsDomain);
      if (!row?.certificate || !row.private_key_sealed || !row.fingerprint || !row.not_after)
        throw notFound('certificate');
      return {
        hostname: row.hostname,
        certificate: row.certificate,
        private_key: sealer.open(row.private_key_sealed),
        fingerprint: row.fingerprint,
        not_after: row.not_after.toISOString(),
      };
    },

    async challenge(agentId: string, token: string) {
      const keyAuthorization = await challengeFor(db, agentId, token, appsDomain);
      if (keyAuthorization === undefined) throw notFound('challenge');
      return { key_authorization: keyAuthorization };
    },
  };
}

export type AgentCertificates = ReturnType<typeof createAgentCertificates>;
