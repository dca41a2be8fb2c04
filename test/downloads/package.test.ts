// The service serves its own CLI and agent: the package at /downloads/frameplane.tgz installs
// into an empty prefix with npm while the registry is unreachable, and the installed command
// runs (--version, agent --help, and a call to this service through the bundled SDK).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';

const exec = promisify(execFile);
let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

it('serves a package that installs without a registry and runs', async () => {
  const tgz = await fetch(`${server}/downloads/frameplane.tgz`);
  expect(tgz.status).toBe(200);
  expect(tgz.headers.get('content-type')).toBe('application/gzip');
  const body = Buffer.from(await tgz.arrayBuffer());
  const sha256 = createHash('sha256').update(body).digest('hex');
  const sum = await (await fetch(`${server}/downloads/frameplane.tgz.sha256`)).text();
  expect(sum).toBe(`${sha256}  frameplane.tgz\n`);
  expect(tgz.headers.get('etag')).toBe(`"${sha256}"`);
  const again = await fetch(`${server}/downloads/frameplane.tgz`, {
    headers: { 'if-none-match': `"${sha256}"` },
  });
  expect(again.status).toBe(304);

  const prefix = mkdtempSync(join(tmpdir(), 'frameplane-prefix-'));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: prefix,
    npm_config_cache: join(prefix, '.npm-cache'),
    npm_config_update_notifier: 'false',
  };
  // An unreachable registry: the install must not need one.
  await exec(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--registry',
      'http://127.0.0.1:1/',
      '--no-audit',
      '--no-fund',
      `${server}/downloads/frameplane.tgz`,
    ],
    { env, timeout: 60_000 },
  );
  const bin = join(prefix, 'bin', 'frameplane');
  expect((await exec(bin, ['--version'], { env })).stdout.trim()).toBe(pkg.version);
  // --help points to `help exit-codes`; the package's README is the README's CLI section.
  const exitCodes = await exec(bin, ['help', 'exit-codes'], { env });
  expect(exitCodes.stdout).toMatch(/^ {2}3 {2}not logged in/m);
  const readme = readFileSync(join(prefix, 'lib/node_modules/frameplane/README.md'), 'utf8');
  expect(readme).toMatch(/^## The command line$/m);
  expect(readme).toContain('`frameplane help exit-codes` prints this table');
  const agentHelp = await exec(bin, ['agent', '--help'], { env });
  expect(agentHelp.stdout).toMatch(/^Usage: frameplane agent --server URL --token TOKEN/);

  const ann = await newUser(t, 'ann');
  const whoami = await exec(bin, ['whoami', '--json'], {
    env: { ...env, FRAMEPLANE_SERVER: server, FRAMEPLANE_TOKEN: ann.token },
  });
  expect(JSON.parse(whoami.stdout)).toMatchObject({ id: ann.id, email: ann.email });
}, 90_000);
