// `frameplane frames logs` with filters (issue 39): --grep, --since, --until, --replica,
// --source on a page, on a followed stream, and --download to a file; run as a real process.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { sync } from '../helpers/frames.ts';
import { createWebFrame, expectProblem, run, runJson, start, userEnv } from './run.ts';
import { timeOf } from '../../src/cli/log-filters.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

/** A user, project Shop, a self-hosted agent and frame "web" on it with some lines. */
async function world() {
  const ann = await newUser(t, 'ann');
  const env = userEnv(server, ann.token);
  const project = await runJson(['projects', 'create', 'Shop', '--json'], env);
  const agent = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'box' },
  });
  expect(agent.status, agent.text).toBe(201);
  const frame = await runJson([...createWebFrame(agent.json.id), '--json'], env);
  const line = (text: string, at: string, replica = 0, source?: string) => ({
    frame_id: frame.id,
    replica,
    at,
    line: text,
    ...(source ? { source } : {}),
  });
  await sync(t, agent.json.token, {
    logs: [
      line('[frameplane] build failed: 100% broken', '2030-01-01T00:00:00Z', 0, 'build'),
      line('GET /a 200', '2030-01-01T00:00:01Z'),
      line('GET /b 500 Internal Error', '2030-01-01T00:00:02Z', 1),
      line('GET /c 500 internal error', '2030-01-01T00:00:03Z', 0),
      line('GET /d 200', '2030-01-01T00:00:04Z', 1),
    ],
  });
  return { env, agent: agent.json as { id: string; token: string }, frame, line };
}

const texts = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).line);

describe('frames logs with filters', () => {
  it('--grep, --replica, --source, --since and --until narrow the lines', async () => {
    const { env } = await world();
    const logs = (...args: string[]) =>
      run(['frames', 'logs', 'web', '-p', 'Shop', '--json', ...args], env);
    expect(texts((await logs('-q', 'INTERNAL')).stdout)).toEqual([
      'GET /b 500 Internal Error',
      'GET /c 500 internal error',
    ]);
    expect(texts((await logs('--grep', 'internal', '--replica', '0')).stdout)).toEqual([
      'GET /c 500 internal error',
    ]);
    expect(texts((await logs('--source', 'build')).stdout)).toEqual([
      '[frameplane] build failed: 100% broken',
    ]);
    const window = await logs('--since', '2030-01-01T00:00:01Z', '--until', '2030-01-01T00:00:03Z');
    expect(texts(window.stdout)).toEqual(['GET /a 200', 'GET /b 500 Internal Error']);
    expect(texts((await logs('-q', '0%')).stdout)).toEqual([
      '[frameplane] build failed: 100% broken',
    ]);
    // A bad time is the service's 422, reported as the CLI reports refusals.
    expectProblem(await logs('--since', 'last tuesday'), 5, 422, 'validation_failed');
    const source = await logs('--source', 'stdout');
    expect(source.code).not.toBe(0);
    expect(source.stderr).toContain('stdout');
  });

  it('--follow with --grep prints only the matching new lines', async () => {
    const { env, agent, line } = await world();
    const follow = start(['frames', 'logs', 'web', '-p', 'Shop', '--follow', '-q', 'error'], env);
    await follow.waitForOutput(/internal error$/m);
    await sync(t, agent.token, {
      logs: [
        line('all fine', new Date().toISOString()),
        line('ERROR: disk', new Date().toISOString()),
      ],
    });
    await follow.waitForOutput(/ERROR: disk$/m);
    follow.child.kill('SIGINT');
    const done = await follow.ended();
    expect(done.code).toBe(0);
    expect(done.stdout).not.toContain('all fine');
  });

  it('--download writes every matching line to a file', async () => {
    const { env } = await world();
    const dir = mkdtempSync(join(tmpdir(), 'frameplane-logs-'));
    const file = join(dir, 'web.txt');
    const r = await run(
      [
        'frames',
        'logs',
        'web',
        '-p',
        'Shop',
        '--grep',
        'get',
        '--replica',
        '1',
        '--download',
        file,
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(
      '2030-01-01T00:00:02.000Z app[1] GET /b 500 Internal Error\n' +
        '2030-01-01T00:00:04.000Z app[1] GET /d 200\n',
    );
    expect(r.stderr).toContain(`to ${file}`);
    expect(existsSync(`${file}.partial`)).toBe(false);
    const refused = await run(
      ['frames', 'logs', 'web', '-p', 'Shop', '--until', 'soon', '--download', join(dir, 'x.txt')],
      env,
    );
    expectProblem(refused, 5, 422, 'validation_failed');
    expect(existsSync(join(dir, 'x.txt'))).toBe(false);
  });

  it('reads a duration as a time back from now', () => {
    const now = Date.parse('2030-01-02T00:00:00Z');
    expect(timeOf('2h', now)).toBe('2030-01-01T22:00:00.000Z');
    expect(timeOf('1d', now)).toBe('2030-01-01T00:00:00.000Z');
    expect(timeOf('2030-01-01T00:00:00Z', now)).toBe('2030-01-01T00:00:00Z');
  });
});
