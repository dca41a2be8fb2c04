#!/usr/bin/env node
// The `frameplane` command. The code is TypeScript run as-is (as `npm start` does), so tsx's
// loader is registered before the CLI is imported. `frameplane agent` goes straight to the
// agent's own command line (src/runner/cli.ts), unchanged; everything else to src/cli.
import { register } from 'tsx/esm/api';

register();
if (process.argv[2] === 'agent') await import('../src/runner/cli.ts');
else await import('../src/cli/main.ts');
