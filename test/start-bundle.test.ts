// `npm start` runs the service bundled by esbuild (scripts/server-build.mjs). A bundled module
// must still find its files beside its source (import.meta.url) and its stack traces must name
// the TypeScript source and line.
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../scripts/server-build.mjs';

describe('the bundled service', () => {
  it('keeps each module its own URL and maps stack traces to the sources', async () => {
    const bundle = await buildServer('test/fixtures/bundle-entry.ts', 'test-bundle-entry');
    const script = `
      process.setSourceMapsEnabled(true);
      const m = await import(${JSON.stringify(pathToFileURL(bundle).href)});
      console.log(m.whereAmI);
      try { m.fail(); } catch (e) { console.log(e.stack.split('\\n')[1]); }`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    }).split('\n');
    const source = new URL('./fixtures/bundle-entry.ts', import.meta.url).href;
    expect(out[0]).toBe(source);
    expect(out[1]).toContain('test/fixtures/bundle-entry.ts:5');
  });
});
