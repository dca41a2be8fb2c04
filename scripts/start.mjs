// `npm start`: the service, bundled (server-build.mjs) and run in this process, with stack
// traces mapped back to the TypeScript sources.
import { pathToFileURL } from 'node:url';
import { buildServer } from './server-build.mjs';

process.setSourceMapsEnabled(true);
const bundle = await buildServer('src/main.ts', 'main');
await import(pathToFileURL(bundle).href);
