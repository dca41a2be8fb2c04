// Placeholder replaced by the invitation page (src/web/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../services.ts';
export function webRoutes(_s: Pick<Services, 'invitations'>): FastifyPluginAsyncTypebox {
  return async () => {};
}
