// The CLI in a pseudo-terminal (util-linux `script`): progress is one rewritten line with colour
// on a terminal, and --json stays clean JSON even when stdout is a terminal.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { replicaEvents, sync } from '../helpers/frames.ts';
import { configHome, run, createWebFrame } from './run.ts';

const ESC = String.fromCharCode(0x1b);

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

const BIN = new URL('../../bin/frameplane.mjs', import.meta.url).pathname;

/**
 * Runs `frameplane args` in a pseudo-terminal; `redirect` sends one stream to a file. Async:
 * the service under test answers from this very process.
 */
async function inTerminal(args: string[], env: Record<string, string>, redirect: string) {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const { stdout } = await promisify(execFile)(
    'script',
    ['-qfec', `${quoted} ${redirect}`, '/dev/null'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: env.XDG_CONFIG_HOME ?? '', TERM: 'xterm', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  return stdout.replace(/\r\n/g, '\n');
}

it('shows progress with a spinner and colour on a terminal; --json stays clean', async () => {
  const ann = await newUser(t, 'ann');
  const env = {
    XDG_CONFIG_HOME: configHome(),
    FRAMEPLANE_SERVER: server,
    FRAMEPLANE_TOKEN: ann.token,
  };
  const project = JSON.parse((await run(['projects', 'create', 'Shop', '--json'], env)).stdout);
  const agent = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'box' },
  });
  const created = await run(createWebFrame(agent.json.id), env);
  expect(created.code, created.stderr).toBe(0);
  const frameId = /^id:\s+(\S+)$/m.exec(created.stdout)?.[1] ?? '';
  // The agent never reports: the frame stays Starting and the wait ends on its timeout.
  await sync(t, agent.json.token);

  const dir = mkdtempSync(join(tmpdir(), 'frameplane-pty-'));
  const progress = await inTerminal(
    ['frames', 'start', 'web', '-p', 'Shop', '--wait', '--timeout', '3'],
    env,
    `>${dir}/out; echo "exit=$?"`,
  );
  // A rewritten line: carriage return, ESC [2K (erase the line), a spinner frame.
  expect(progress).toMatch(new RegExp(`\r${ESC}\\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] web: Starting`));
  expect(progress).toContain('\x1b[31mweb: Starting: no final status within the timeout');
  expect(progress).toContain('exit=7');

  await sync(t, agent.json.token, { events: replicaEvents(frameId, 1, 'healthy') });
  const json = await inTerminal(
    ['frames', 'show', 'web', '-p', 'Shop', '--json'],
    env,
    `2>${dir}/err`,
  );
  expect(JSON.parse(json)).toMatchObject({ id: frameId, name: 'web' });
  expect(json).not.toContain('\x1b[');
  expect(readFileSync(`${dir}/err`, 'utf8')).toBe('');
  const human = await inTerminal(['frames', 'list', '-p', 'Shop'], env, '');
  expect(human).toContain('\x1b[1mID'); // headings in bold on a terminal
});
