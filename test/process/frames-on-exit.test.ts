// Issue 34, item 13: Ctrl-C left frames running and unreachable (the agent's proxy, which routes
// a frame's port to its replicas, stops with the service). FRAMES_ON_EXIT decides
// (src/cloud/frames-on-exit.ts): `auto` stops them when a person started the service from a
// terminal and keeps them otherwise (a service manager's restart must not restart every app);
// `stop` and `keep` force either, and the service's last log line says which happened.
// Real services on the process runtime; the agent's own adoption is tested in agent.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll, newTenantFrame, startInstance, until } from '../faults/helpers/service.ts';
import { freePort } from '../helpers/smtp.ts';
import { appProcesses, gitFixture, hitFrame, killApps } from '../runner/fixture.ts';
import { stopsFramesOnExit } from '../../src/cloud/frames-on-exit.ts';
import type { FramesOnExit } from '../../src/config.ts';

describe('FRAMES_ON_EXIT: whether the built-in cloud stops its frames with the service', () => {
  it.each([
    ['auto', true, true], // `npm start` in a terminal: Ctrl-C stops what it started
    ['auto', false, false], // a service manager (stdin not a terminal): apps outlive a restart
    ['stop', true, true],
    ['stop', false, true],
    ['keep', true, false],
    ['keep', false, false],
  ] as Array<[FramesOnExit, boolean, boolean]>)(
    '%s, stdin a terminal: %s → stop: %s',
    (setting, terminal, stop) => {
      expect(stopsFramesOnExit(setting, terminal)).toBe(stop);
    },
  );
});

let root: string;
let gitBaseUrl: string;
// The built-in cloud's edge, on a port of its own: other tests start services beside this one.
let edgePort: number;

beforeAll(async () => {
  edgePort = await freePort();
  root = mkdtempSync(join(tmpdir(), 'frameplane-frames-on-exit-'));
  chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`
  const repo = gitFixture(root);
  repo.pushApp('v1');
  gitBaseUrl = repo.gitBaseUrl;
});
afterAll(() => {
  killAll();
  if (root) {
    killApps(root);
    rmSync(root, { recursive: true, force: true });
  }
});

/** The service with the built-in cloud on the process runtime, on one DATA_DIR for all. */
const start = (framesOnExit: string) =>
  startInstance(
    `frames-on-exit-${framesOnExit}`,
    {
      DATA_DIR: join(root, 'data'),
      DATABASE_URL: '',
      CLOUD_AGENT: 'builtin',
      FRAME_RUNTIME: 'process',
      GIT_BASE_URL: gitBaseUrl,
      LOG_LEVEL: 'info',
      FRAMES_ON_EXIT: framesOnExit,
      EDGE_HTTP_PORT: String(edgePort),
    },
    60_000,
  );

/** The last line the service logged. */
const lastLine = (log: string) => JSON.parse(log.trim().split('\n').at(-1) ?? '{}');

describe('stopping the service', () => {
  it('stop leaves no app process; keep leaves the app running and the next start adopts it', {
    timeout: 240_000,
  }, async () => {
    const first = await start('stop');
    const { frame } = await newTenantFrame(first.base, 'ann@example.test');
    const hit = () => hitFrame(edgePort, frame.hostname);
    const serves = (what: string, log: () => string) =>
      until(
        what,
        async () => {
          const r = await hit();
          return 'body' in r && r.body.startsWith('hello v1') ? r.body : log().slice(-3000);
        },
        (b) => b.startsWith('hello v1'),
        120_000,
        250,
      );

    // FRAMES_ON_EXIT=stop: the app goes with the service, and the log says it starts again.
    await serves('the app, first start', first.log);
    expect(appProcesses(root)).toHaveLength(1);
    expect(await first.kill('SIGTERM')).toBe(0);
    expect(appProcesses(root)).toEqual([]);
    expect(lastLine(first.log())).toMatchObject({
      frames_stopped: 1,
      msg:
        'Frameplane stopped; 1 frame of the built-in cloud was stopped, ' +
        'to start again on the next start',
    });

    // FRAMES_ON_EXIT=keep: it starts again, and outlives the service, unreachable.
    const second = await start('keep');
    await serves('the app started again', second.log);
    const kept = appProcesses(root);
    expect(kept).toHaveLength(1);
    expect(await second.kill('SIGTERM')).toBe(0);
    expect(appProcesses(root)).toEqual(kept);
    expect(await hit()).toHaveProperty('error');
    expect(lastLine(second.log())).toMatchObject({
      level: 40,
      frames_left_running: 1,
      msg:
        'Frameplane stopped; 1 frame of the built-in cloud is left running, unreachable ' +
        'until Frameplane starts again and adopts them (FRAMES_ON_EXIT=stop stops them)',
    });

    // The next start adopts that very process, and serves it again.
    const third = await start('stop');
    await serves('the adopted app', third.log);
    expect(third.log()).toContain('"adopted_frames":1');
    expect(appProcesses(root)).toEqual(kept);
    expect(await third.kill('SIGTERM')).toBe(0);
    expect(appProcesses(root)).toEqual([]);
  });
});
