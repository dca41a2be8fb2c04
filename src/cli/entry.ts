// Where `frameplane` starts: `frameplane agent` goes straight to the agent's own command line
// (src/runner/cli.ts), unchanged; everything else to the CLI (main.ts). Both the bin (through
// tsx) and the downloadable bundle (scripts/package.ts) start here.
if (process.argv[2] === 'agent') await import('../runner/cli.ts');
else await import('./main.ts');
