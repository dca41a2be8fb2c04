// npm run sdk:generate: writes src/sdk/schema.d.ts from the OpenAPI document. Check the result in.
import { writeFileSync } from 'node:fs';
import { openapiDocument } from './openapi-document.ts';
import { SCHEMA_FILE, schemaSource } from './sdk-schema.ts';

writeFileSync(SCHEMA_FILE, await schemaSource(await openapiDocument()));
process.stdout.write(`wrote ${SCHEMA_FILE.pathname}\n`);
