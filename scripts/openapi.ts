// Prints the OpenAPI document (GET /v2/openapi.json) without starting a server or a database:
// the app is built on a pool that is never used. CI lints what this writes (npm run
// lint:openapi). PUBLIC_URL, when set, is the document's server, as it is for the service.
import { loadConfig } from '../src/config.ts';
import { createDatabase, createPool } from '../src/db/database.ts';
import { systemClock } from '../src/clock.ts';
import { sealer } from '../src/secrets.ts';
import { createServices } from '../src/services.ts';
import { buildApp } from '../src/app.ts';

const config = loadConfig({
  ...process.env,
  DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
  ADMIN_TOKEN: 'unused',
});
const db = createDatabase(createPool(config.databaseUrl ?? '', { max: 1 }));
const core = { config, db, clock: systemClock(db, {}), sealer: sealer('unused') };
const app = await buildApp(core, createServices(core));
await app.ready();
process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
await db.destroy();
