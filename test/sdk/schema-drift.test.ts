// The SDK's checked-in types must be exactly what the generator makes of the document the
// service serves: a route whose schema changed without `npm run sdk:generate` fails here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCHEMA_FILE, schemaSource } from '../../scripts/sdk-schema.ts';
import { testApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

it('src/sdk/schema.d.ts is generated from the live /v2/openapi.json', async () => {
  const r = await t.get('/v2/openapi.json');
  expect(r.status).toBe(200);
  const expected = await schemaSource(r.json);
  const actual = readFileSync(SCHEMA_FILE, 'utf8');
  // On failure, run `npm run sdk:generate` and commit src/sdk/schema.d.ts.
  expect(actual === expected, 'src/sdk/schema.d.ts is stale: run npm run sdk:generate').toBe(true);
});
