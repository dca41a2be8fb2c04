// `frameplane frames volumes` against a real service: add, list (table and JSON), the service's
// refusals (a name taken, a system mount path), a bad --size caught before any request, remove.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { createWebFrame, expectProblem, run, runJson, userEnv } from './run.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

describe('frames volumes', () => {
  it('adds, lists and removes the volumes of a frame', async () => {
    const ann = await newUser(t, 'ann');
    const env = userEnv(server, ann.token);
    const p = ['-p', 'Shop'];
    const project = await runJson(['projects', 'create', 'Shop'], env);
    const agent = await t.post(`/v2/projects/${project.id}/agents`, {
      token: ann.token,
      body: { name: 'box' },
    });
    const frame = await runJson(createWebFrame(agent.json.id), env);
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
});
