// The OpenAPI document (what GET /v2/openapi.json answers), built without a server or a
// database: the app is built on a pool that is never used. Shared by scripts/openapi.ts (which
// prints it for the linter) and scripts/sdk-generate.ts (which turns it into the SDK's types).
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { systemClock } from '../src/clock.ts';
import { sealer } from '../src/secrets.ts';
import { createServices } from '../src/services.ts';
import { buildApp } from '../src/app.ts';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    ADMIN_TOKEN: 'unused',
  });
  const db = createDatabase(config.databaseUrl ?? '', { max: 1 });
  const core = { config, db, clock: systemClock(db, {}), sealer: sealer('unused') };
  const app = await buildApp(core, createServices(core));
  await app.ready();
  const doc = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  await db.destroy();
  return doc;
}
