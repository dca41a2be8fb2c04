// What `frames stop|start` and `frames events` say, against a real service and an agent the
// test plays: a stop is "Stopping…" until the agent's replicas have stopped, then "Stopped";
// events say what happened ("replica 0 crashed (exit 1)"), not their bare kind.
import { describe, expect, it } from 'vitest';
import { replicaEvents, serveAt, sync, toldOf } from '../helpers/frames.ts';
import { createWebFrame, run, runJson, start } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const svc = serviceForFile();
const sha = 'c0ffee1234567890c0ffee1234567890c0ffee12';

describe('frame words', { timeout: 60_000 }, () => {
  it('stop says Stopping… until the replicas stop; events say what happened', async () => {
    const { t, server } = svc;
    const { env, agent } = await shopWorld(t, server);
    const frame = await runJson(createWebFrame(agent.id), env);
    await serveAt(t, agent.token, frame.id, sha);

    // The agent still runs the replica: the frame is Stopped in intent, stopping in fact.
    const stop = await run(['frames', 'stop', 'web', '-p', 'Shop'], env);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(/^status:\s+Stopping…$/m);
    expect(stop.stdout).not.toContain('(stopping)');

    const wait = start(['frames', 'stop', 'web', '-p', 'Shop', '--wait'], env);
    await wait.waitForStderr(/^web: Stopping…$/m);
    expect(wait.child.exitCode).toBeNull(); // not Stopped yet: it waits on
    const told = await toldOf(t, agent.token, frame.id);
    await sync(t, agent.token, {
      events: replicaEvents(frame.id, 1, 'stopped', { generation: told.generation }),
    });
    const stopped = await wait.ended();
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/web: Stopped\n$/);

    // Started again, its replica crashes.
    const started = await run(['frames', 'start', 'web', '-p', 'Shop'], env);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(/^status:\s+Starting$/m);
    const again = await toldOf(t, agent.token, frame.id);
    await sync(t, agent.token, {
      events: replicaEvents(frame.id, 1, 'crashed', {
        generation: again.generation,
        detail: { exit_code: 1, message: 'replica 0 exited (exit code 1)' },
      }),
    });

    const events = await run(['frames', 'events', 'web', '-p', 'Shop'], env);
    expect(events.code, events.stderr).toBe(0);
    const lines = events.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(/^\S+ /, ''));
    expect(lines).toEqual([
      'created',
      'Starting',
      'Starting → Online',
      'stop asked',
      'Online → Stopping…',
      'stop asked (it was stopped already)',
      'Stopped',
      'start asked',
      'Stopped → Starting',
      'replica 0 crashed (exit 1)',
      'Starting → Error (crashed)',
    ]);
    const json = await run(['frames', 'events', 'web', '-p', 'Shop', '--json'], env);
    const crash = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'replica');
    expect(crash.detail).toMatchObject({ replica: 0, state: 'crashed', exit_code: 1 });
  });
});
