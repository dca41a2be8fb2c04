import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../db/database.ts';
import { serviceUnavailable } from './errors.ts';
import { problemResponses } from './schemas.ts';

export function healthRoutes({ db, isReady }: { db: Database; isReady: () => boolean }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const Status = Type.Object({ status: Type.String() });
    app.get('/healthz', {
      config: { auth: 'none' }, schema: { tags: ['health'], summary: 'The process lives', response: { 200: Status } },
    }, async () => ({ status: 'ok' }));

    app.get('/readyz', {
      config: { auth: 'none' },
      schema: { tags: ['health'], summary: 'The database is reachable and migrated', response: { 200: Status, ...problemResponses } },
    }, async () => {
      if (!isReady()) throw serviceUnavailable('not_ready', 'Starting up: migrations are not applied yet.');
      try {
        await sql`select 1`.execute(db);
      } catch {
        throw serviceUnavailable('database_unavailable', 'The database is not reachable.');
      }
      return { status: 'ready' };
    });
  };
}
