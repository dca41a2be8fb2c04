// The operator API (CONTRACT 7), behind ADMIN_TOKEN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../clock.ts';
import { AppError } from '../http/errors.ts';
import { problemResponses, Timestamp } from '../http/schemas.ts';

export interface TimeRules { runDue(now: Date): Promise<void> }

export function adminRoutes({ clock, testClock, timeRules }: { clock: Clock; testClock: boolean; timeRules: TimeRules }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/v2/admin/clock', {
      config: { auth: 'admin' },
      schema: {
        tags: ['operator'], summary: 'Move the service clock forward (TEST_CLOCK=1 only) and run the time rules now due',
        body: Type.Object({ advance_seconds: Type.Number({ minimum: 0, maximum: 10 * 365 * 86400 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ now: Timestamp }), ...problemResponses },
      },
    }, async (req) => {
      if (!testClock) throw new AppError(404, 'route_not_found', 'Not found', 'The test clock is disabled (TEST_CLOCK is not 1).');
      const now = await clock.advance(req.body.advance_seconds);
      await timeRules.runDue(now);
      return { now: now.toISOString() };
    });
  };
}
