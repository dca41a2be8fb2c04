// Resolves the caller before any body is read, so an anonymous request with a bad body is 401,
// not 422. Each route says what it needs in `config.auth` (default: a signed-in user); the
// OpenAPI document learns the same from it (see app.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../actor.ts';
import { AppError, malformedAuthorization, unauthorized } from '../errors.ts';
import { safeEqual } from '../secrets.ts';
import type { AgentIdentity } from '../agent-api/agents-service.ts';

export type AuthMode = 'user' | 'optional' | 'none' | 'admin' | 'agent';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    actor?: Actor;
    agent?: AgentIdentity;
  }
}

export interface Authenticator {
  authenticate(token: string): Promise<{ userId: string; tokenId: string } | undefined>;
}

/** The bearer token: undefined without an Authorization header, '' when it is not
 *  `Bearer <token>`. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S{1,512})\s*$/i.exec(h);
  return m ? m[1] : '';
}

const AGENT_TOKEN_REQUIRED =
  'A valid agent token is required: send Authorization: Bearer <token>, ' +
  'with the token shown once when the agent was created.';

export interface AgentAuthenticator {
  authenticate(token: string): Promise<AgentIdentity | undefined>;
}

export function agentOf(request: FastifyRequest): AgentIdentity {
  if (!request.agent) throw unauthorized(AGENT_TOKEN_REQUIRED);
  return request.agent;
}

export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw unauthorized();
  return request.actor;
}

export function installAuth(
  app: FastifyInstance,
  identity: Authenticator,
  agents: AgentAuthenticator,
  adminToken: string | undefined,
) {
  app.addHook('onRequest', async (request) => {
    const mode = request.routeOptions.config?.auth ?? 'user';
    if (mode === 'none' || request.routeOptions.url === undefined) return;
    const token = bearerToken(request);
    // Without ADMIN_TOKEN the operator API does not exist.
    if (mode === 'admin' && !adminToken) {
      throw new AppError(404, 'route_not_found', 'Not found', 'The operator API is disabled.');
    }
    // A header that is there but not `Bearer <token>` ("Authorization: <token>", Basic): say how
    // to send it, rather than calling a token that was never read unknown or revoked.
    if (token === '') throw malformedAuthorization();
    if (mode === 'admin') {
      if (!token || !adminToken || !safeEqual(token, adminToken)) {
        throw unauthorized(
          'The operator token is required: ' + 'send Authorization: Bearer <ADMIN_TOKEN>.',
        );
      }
      return;
    }
    if (mode === 'agent') {
      // Agent tokens and user tokens live in different tables: neither opens the other's routes.
      const agent = token ? await agents.authenticate(token) : undefined;
      if (!agent) throw unauthorized(AGENT_TOKEN_REQUIRED);
      request.agent = agent;
      return;
    }
    if (token === undefined) {
      if (mode === 'optional') return;
      throw unauthorized();
    }
    const who = await identity.authenticate(token);
    if (!who) {
      throw unauthorized(
        'The bearer token is unknown, expired or revoked: sign in again ' +
          '(POST /v2/auth/login) or create a token, and send Authorization: Bearer <token>.',
      );
    }
    // Field by field: a spread copied whatever else the token cache's entry holds, into an
    // object of a shape of its own per request.
    request.actor = {
      userId: who.userId,
      tokenId: who.tokenId,
      requestId: request.id,
      ip: request.ip,
    };
  });
}
