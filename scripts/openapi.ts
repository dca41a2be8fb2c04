// Prints the OpenAPI document (GET /v2/openapi.json) without starting a server or a database.
// CI lints what this writes (npm run lint:openapi). PUBLIC_URL, when set, is the document's
// server, as it is for the service.
import { openapiDocument } from './openapi-document.ts';

process.stdout.write(`${JSON.stringify(await openapiDocument(), null, 2)}\n`);
