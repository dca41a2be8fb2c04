// `frameplane spaces` against a real service: create, list (table and JSON), show, rename, a
// frame created in a space named on the command line, delete refused while it holds the frame.
import { describe, expect, it } from 'vitest';
import { newUser } from '../helpers/factories.ts';
import { createWebFrame, expectProblem, run, runJson, userEnv } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const svc = serviceForFile();

describe('spaces', () => {
  it('creates, lists, renames and deletes the spaces of a project', async () => {
    const { t, server } = svc;
    const { env, project, agent } = await shopWorld(t, server);
    const p = ['-p', 'Shop'];

    const staging = await runJson(['spaces', 'create', 'staging', ...p], env);
    expect(staging).toMatchObject({ project_id: project.id, name: 'staging' });
    const listed = await run(['spaces', 'list', ...p], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+CREATED$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${staging.id}\\s+staging\\s`, 'm'));
    expect((await runJson(['spaces', 'list', ...p], env)).map((s: any) => s.name)).toEqual([
      'default',
      'staging',
    ]);

    const renamed = await runJson(['spaces', 'rename', 'staging', 'preview', ...p], env);
    expect(renamed).toMatchObject({ id: staging.id, name: 'preview' });
    const shown = await run(['spaces', 'show', 'preview', ...p], env);
    expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${staging.id}$`, 'm'));
    // Names are unique within a project: the service's refusal, word for word.
    expectProblem(
      await run(['spaces', 'create', 'default', ...p], env),
      5,
      409,
      'space_name_taken',
    );

    // A space holding a frame cannot go; frames create takes the space by name.
    const frame = await runJson([...createWebFrame(agent.id), '--space', 'preview'], env);
    expect(frame.space_id).toBe(staging.id);
    const full = await run(['spaces', 'delete', 'preview', ...p], env);
    expectProblem(full, 5, 409, 'space_not_empty');
    expect(full.stderr).toContain('delete them first');
    await runJson(['frames', 'delete', 'web', '--yes', ...p], env);
    const deleted = await run(['spaces', 'delete', staging.id, ...p], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain('Deleted space');
    expect((await runJson(['spaces', 'list', ...p], env)).map((s: any) => s.id)).not.toContain(
      staging.id,
    );
    expect((await run(['spaces', 'show', 'preview', ...p], env)).code).toBe(4);

    // Someone without access to the project: not found, as the service says.
    const bob = await newUser(t, 'bob');
    const missing = await run(['spaces', 'list', '-p', project.id], userEnv(server, bob.token));
    expectProblem(missing, 4, 404, 'project_not_found');
  });
});
