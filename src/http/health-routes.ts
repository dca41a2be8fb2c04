import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../db/database.ts';
import { serviceUnavailable } from '../errors.ts';
import { sendProblem } from './error-handler.ts';
import { pingDatabase } from './health-dal.ts';
import { problemResponses } from './schemas.ts';

const READY_TIMEOUT_MS = 2000;

export function healthRoutes({
  db,
  isReady,
}: {
  db: Database;
  isReady: () => boolean;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const Status = Type.Object({ status: Type.String() }, { title: 'HealthStatus' });
    app.get(
      '/healthz',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['health'],
          summary: 'The process lives',
          response: { 200: Status, ...problemResponses },
        },
      },
      async () => ({ status: 'ok' }),
    );

    app.get(
      '/readyz',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['health'],
          summary: 'The database is reachable and migrated',
          response: { 200: Status, ...problemResponses },
        },
      },
      async (_req, reply) => {
        // Starting up is the expected answer of a probe that comes early, not a failure: it is
        // sent as it is, without the error handler's `request failed` warning.
        if (!isReady()) {
          return sendProblem(
            reply,
            serviceUnavailable('not_ready', 'Starting up: migrations are not applied yet.'),
          );
        }
        // A load balancer's probe gives up after a few seconds: answer before it does, even when
        // the database has stopped answering (the query itself waits for the pool's timeout).
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            pingDatabase(db),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('readyz timeout')), READY_TIMEOUT_MS);
            }),
          ]);
        } catch {
          throw serviceUnavailable('database_unavailable', 'The database is not reachable.');
        } finally {
          clearTimeout(timer);
        }
        return { status: 'ready' };
      },
    );
  };
}
