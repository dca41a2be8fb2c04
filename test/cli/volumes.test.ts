// `frameplane frames volumes` against a real service: add, list (table and JSON), the service's
// refusals (a name taken, a system mount path), a bad --size caught before any request, remove;
// --deploy on add and remove starts a config release of the serving build.
import { describe, expect, it } from 'vitest';
import { createWebFrame, expectProblem, run, runJson } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';
import { serveAt, toldOf } from '../helpers/frames.ts';

const svc = serviceForFile();

describe('frames volumes', () => {
  it('adds, lists and removes the volumes of a frame', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    const p = ['-p', 'Shop'];
    const frame = await runJson(createWebFrame(agent.id), env);
    const add = ['frames', 'volumes', 'add', 'web'];

    const volume = await runJson([...add, 'data', '--mount', '/data', '--size', '5', ...p], env);
    expect(volume).toMatchObject({
      frame_id: frame.id,
      name: 'data',
      mount_path: '/data',
      size_gb: 5,
    });
    const listed = await run(['frames', 'volumes', 'list', 'web', ...p], env);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+MOUNT\s+SIZE$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${volume.id}\\s+data\\s+/data\\s+5 GB$`, 'm'));

    const taken = await run([...add, 'data', '--mount', '/cache', '--size', '1', ...p], env);
    expectProblem(taken, 5, 409, 'volume_name_taken');
    const system = await run([...add, 'etc', '--mount', '/etc/app', '--size', '1', ...p], env);
    expectProblem(system, 5, 422, 'invalid_mount_path');
    const size = await run([...add, 'big', '--mount', '/big', '--size', 'lots', ...p], env);
    expect(size.code).toBe(2);
    expect(size.stderr).toContain('--size must be a whole number');

    const removed = await run(['frames', 'volumes', 'remove', 'web', 'data', ...p], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('Removed volume data (/data)');
    expect(await runJson(['frames', 'volumes', 'list', 'web', ...p], env)).toEqual([]);
    expect((await run(['frames', 'volumes', 'remove', 'web', 'data', ...p], env)).code).toBe(4);
  });

  it('applies an added or removed volume at once with --deploy', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    const p = ['-p', 'Shop'];
    const frame = await runJson(createWebFrame(agent.id), env);
    const first = (await serveAt(svc.t, agent.token, frame.id, 'a'.repeat(40))).deployment_id;
    const add = ['frames', 'volumes', 'add', 'web', 'logs', '--mount', '/logs', '--size', '1'];

    const added = await run([...add, '--deploy', ...p], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/deployment:\s+dep_\w+/);
    expect(added.stderr).toMatch(/web: released as dep_\w+/);
    const told = await toldOf(svc.t, agent.token, frame.id);
    expect(told).toMatchObject({ release_of: first });
    expect(told.volumes.map((v: { name: string }) => v.name)).toEqual(['logs']);
    await serveAt(svc.t, agent.token, frame.id, 'a'.repeat(40));

    const removed = await runJson(
      ['frames', 'volumes', 'remove', 'web', 'logs', '--deploy', ...p],
      env,
    );
    expect(removed.deployment).toMatchObject({ trigger: 'config', release_of: first });
    expect(await toldOf(svc.t, agent.token, frame.id)).toMatchObject({
      deployment_id: removed.deployment.id,
      volumes: [],
    });
    // Without --deploy, the note says when the change reaches what runs.
    const later = await run([...add, ...p], env);
    expect(later.stderr).toContain('keeps its mounts until the next deploy');
  });
});
