#!/usr/bin/env node
// The `frameplane` command. The code is TypeScript run as-is (as `npm start` does), so tsx's
// loader is registered before the CLI is imported.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/entry.ts');
