// The OpenAPI document (GET /v2/openapi.json): @fastify/swagger's options. Each route's schema
// says what the route takes and answers; what every operation shares is added here, once:
// its operationId (one rule, from the method and the path), its security and a description
// that says which token it needs. The whole document is then finished by openapi-document.ts
// (error media type, named schemas, answer descriptions).
import type { SwaggerOptions } from '@fastify/swagger';
import type { AuthMode } from './auth.ts';
import { finishDocument } from './openapi-document.ts';

/** The tags of the document, in the order a reader meets them. */
export const TAGS = [
  { name: 'health', description: 'Liveness and readiness probes, for load balancers.' },
  {
    name: 'identity',
    description: 'Sign-up, e-mail verification, login, the signed-in user and their API tokens.',
  },
  { name: 'projects', description: 'Projects, their spaces, and who may reach them.' },
  { name: 'teams', description: 'Teams and their members.' },
  { name: 'invitations', description: 'Invitations to a team, sent by e-mail.' },
  { name: 'grants', description: "A team's roles on projects it does not own." },
  { name: 'orgs', description: 'Organizations: members, invitations and the projects they own.' },
  {
    name: 'frames',
    description:
      'Frames (deployed apps): their lifecycle, deployments, logs, events, env, domains ' +
      'and volumes.',
  },
  { name: 'agents', description: 'Agents that run frames, and the sync they call.' },
  { name: 'webhooks', description: 'Git push hooks that deploy frames.' },
  {
    name: 'notifications',
    description: "Outgoing webhooks: a project's events, signed, sent to its endpoints.",
  },
  { name: 'operator', description: 'Operator actions (ADMIN_TOKEN): billing, owners, the clock.' },
];

const SECURITY: Record<AuthMode, Array<Record<string, string[]>>> = {
  user: [{ bearer: [] }],
  admin: [{ operator: [] }],
  agent: [{ agent: [] }],
  optional: [{}, { bearer: [] }],
  none: [],
};

const AUTH_SENTENCE: Record<AuthMode, string> = {
  user: "Needs a user's bearer token (from sign-up, login or POST /v2/user/tokens).",
  admin: "Needs the operator's bearer token (ADMIN_TOKEN).",
  agent: "Needs an agent's bearer token.",
  optional: 'Needs no token; a bearer token, when sent, must be valid.',
  none: 'Needs no token.',
};

const pascal = (word: string) =>
  word
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/**
 * The operationId of a route: the method in lower case, then each literal segment of the path
 * after `/v2` in PascalCase; path parameters are left out, and a segment followed by one is
 * made singular (its final `s` dropped). `GET /v2/teams` is `getTeams`, `GET /v2/teams/:team_id`
 * is `getTeam`, `POST /v2/teams/:team_id/invitations/:invitation_id/resend` is
 * `postTeamInvitationResend`. Documented in docs/api.md; renaming a path renames its operation.
 */
export function operationIdOf(method: string, url: string): string {
  const parts = url.split('/').filter((p) => p !== '' && p !== 'v2');
  const isParam = (p: string | undefined) => p?.startsWith(':') || p?.startsWith('{');
  const words = parts.flatMap((part, i) => {
    if (isParam(part)) return [];
    const singular = isParam(parts[i + 1]) && part.endsWith('s') ? part.slice(0, -1) : part;
    return [pascal(singular)];
  });
  return method.toLowerCase() + words.join('');
}

/** @fastify/swagger's options; `publicUrl` is the document's one server. */
export function openapiOptions({
  publicUrl,
  bodyLimitBytes,
}: {
  publicUrl: string;
  bodyLimitBytes: number;
}): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Frameplane API',
        version: '2.0.0',
        description:
          'Teams, sharing and Frames. Errors are application/problem+json (RFC 9457). A ' +
          `request body is at most ${bodyLimitBytes} bytes (BODY_LIMIT_BYTES); a larger one ` +
          'is refused with 413 `body_too_large`.',
      },
      servers: [{ url: publicUrl, description: 'This service (PUBLIC_URL)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          operator: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
          agent: { type: 'http', scheme: 'bearer', description: 'An agent token' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      const auth: AuthMode = (route.config as { auth?: AuthMode } | undefined)?.auth ?? 'user';
      const method = Array.isArray(route.method) ? route.method[0] : route.method;
      const given = (schema as { description?: string }).description;
      const description = given ? `${given}\n\n${AUTH_SENTENCE[auth]}` : AUTH_SENTENCE[auth];
      const operationId = operationIdOf(String(method), url);
      return {
        schema: { ...schema, operationId, description, security: SECURITY[auth] } as typeof schema,
        url,
      };
    },
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) throw new Error('only OpenAPI 3 is generated');
      return finishDocument(documents.openapiObject, bodyLimitBytes);
    },
  };
}
