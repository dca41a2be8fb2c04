// The agent's reads of certificates and challenges (agent-certificates.ts), with its token.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { agentOf } from '../http/auth.ts';
import { problemResponses } from '../http/schemas.ts';
import type { AgentCertificates } from './agent-certificates.ts';

const tags = ['agents'];

export const EdgeCertificate = Type.Object(
  {
    hostname: Type.String(),
    certificate: Type.String({ description: 'The chain, leaf first, PEM' }),
    private_key: Type.String({ description: "The leaf's private key, PEM" }),
    fingerprint: Type.String({ description: 'SHA-256 of the leaf, hex' }),
    not_after: Type.String({ format: 'date-time' }),
  },
  { title: 'EdgeCertificate', additionalProperties: false },
);

export function certificateRoutes({
  agentCertificates,
}: {
  agentCertificates: AgentCertificates;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v2/agent/certificates/:hostname',
      {
        // The answer carries a private key, sealed at rest: never kept for a replay.
        config: { auth: 'agent', secretAnswer: 'Read it again: it is the current certificate.' },
        schema: {
          tags,
          summary: 'The certificate and key of a host that a frame of this agent serves',
          security: [{ agent: [] }],
          params: Type.Object({
            hostname: Type.String({ pattern: '^[A-Za-z0-9._-]{1,253}$' }),
          }),
          response: { 200: EdgeCertificate, ...problemResponses },
        },
      },
      async (req) => agentCertificates.certificate(agentOf(req).id, req.params.hostname),
    );

    app.get(
      '/v2/agent/acme-challenges/:token',
      {
        config: { auth: 'agent' },
        schema: {
          tags,
          summary: "An ACME HTTP-01 challenge's key authorization, for a host this agent serves",
          security: [{ agent: [] }],
          params: Type.Object({
            token: Type.String({ pattern: '^[A-Za-z0-9_-]{1,256}$' }),
          }),
          response: {
            200: Type.Object(
              { key_authorization: Type.String() },
              { title: 'AcmeChallenge', additionalProperties: false },
            ),
            ...problemResponses,
          },
        },
      },
      async (req) => agentCertificates.challenge(agentOf(req).id, req.params.token),
    );
  };
}
