// Releases (issue 36), at the API with a scripted agent: a restart runs the serving release
// again and a rollback an earlier one, each a new deployment that names the build it runs
// (`release_of`) and carries that release's commit and env, so the agent builds nothing;
// a rollback may take the frame's env as it is now instead; what never served, or whose build
// is no longer kept, answers 409 saying what to do; a viewer can do neither.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, projectWithReaders } from '../helpers/factories.ts';
import {
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  serveAt,
  toldOf,
} from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ env: { RELEASES_KEPT: '2' } });
});
afterAll(async () => {
  await t.close();
});

const SHA = (c: string) => c.repeat(40);

describe('restart and rollback', () => {
  it('run an earlier build again, with its env or the current one; 409 where none is kept', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const agent = await cloudAgent(t);
    const frame = await newFrame(t, ann, project.id, space, {});
    const path = framePath(frame);
    const told = () => toldOf(t, agent.token, frame.id);
    const serve = (sha: string) => serveAt(t, agent.token, frame.id, sha);
    const setEnv = (vars: Record<string, string>) =>
      t.put(`${path}/env`, { token: ann.token, body: { vars } });
    const deploy = async () => {
      const r = await t.post(`${path}/deploy`, { token: ann.token, body: {} });
      expect(r.status, r.text).toBe(202);
      return r.json;
    };

    expect((await setEnv({ V: 'one' })).status).toBe(200);
    await deploy();
    const v1 = await serve(SHA('a'));
    expect((await setEnv({ V: 'two' })).status).toBe(200);
    await deploy();
    const v2 = await serve(SHA('b'));
    expect(v2.env).toEqual({ V: 'two' });

    // A restart: the serving release again, nothing to build.
    const restart = await t.post(`${path}/restart`, { token: ann.token });
    expect(restart.status, restart.text).toBe(202);
    expect(restart.json).toMatchObject({
      trigger: 'restart',
      status: 'in_progress',
      commit_sha: SHA('b'),
      release_of: v2.deployment_id,
    });
    const restarted = await told();
    expect(restarted).toMatchObject({
      deployment_id: restart.json.id,
      commit_sha: SHA('b'),
      release_of: v2.deployment_id,
      env: { V: 'two' },
    });
    await serve(SHA('b'));

    // A rollback to v1: its build and, by default, its env.
    expect((await setEnv({ V: 'three' })).status).toBe(200);
    const back = await t.post(`${path}/deployments/${v1.deployment_id}/rollback`, {
      token: ann.token,
    });
    expect(back.status, back.text).toBe(202);
    expect(back.json).toMatchObject({ trigger: 'rollback', release_of: v1.deployment_id });
    expect(await told()).toMatchObject({
      commit_sha: SHA('a'),
      release_of: v1.deployment_id,
      env: { V: 'one' },
    });
    await serve(SHA('a'));
    expect((await t.get(path, { token: ann.token })).json.serving).toMatchObject({
      deployment_id: back.json.id,
      commit_sha: SHA('a'),
    });

    // Back to v2 with the frame's env as it is now; the rollback's own build is v1's.
    const current = await t.post(`${path}/deployments/${v2.deployment_id}/rollback`, {
      token: ann.token,
      body: { config: 'current' },
    });
    expect(current.status, current.text).toBe(202);
    expect(await told()).toMatchObject({ release_of: v2.deployment_id, env: { V: 'three' } });
    await serve(SHA('b'));
    const again = await t.post(`${path}/deployments/${back.json.id}/rollback`, {
      token: ann.token,
    });
    expect(again.json).toMatchObject({ release_of: v1.deployment_id, commit_sha: SHA('a') });
    await serve(SHA('a'));

    // The builds of two releases are kept (RELEASES_KEPT=2): two new ones push v1's out.
    await deploy();
    await serve(SHA('c'));
    await deploy();
    await serve(SHA('d'));
    const pruned = await t.post(`${path}/deployments/${v1.deployment_id}/rollback`, {
      token: ann.token,
    });
    expectProblem(pruned, 409, 'release_pruned');
    expect(pruned.json.detail).toContain(SHA('a'));
    // A deploy of its commit builds it again.
    const rebuild = await t.post(`${path}/deploy`, {
      token: ann.token,
      body: { commit_sha: SHA('a') },
    });
    expect(rebuild.status, rebuild.text).toBe(202);
    expect(await told()).toMatchObject({ commit_sha: SHA('a'), release_of: null });

    const history = (await t.get(`${path}/events?limit=50`, { token: ann.token })).json.data;
    const triggers = history
      .filter((e: any) => e.type === 'deploy')
      .map((e: any) => e.detail.trigger);
    expect(triggers).toEqual([
      'manual',
      'manual',
      'restart',
      'rollback',
      'rollback',
      'rollback',
      'manual',
      'manual',
      'manual',
    ]);
  });

  it('refuse what never served, a frame with nothing serving, and a viewer', async () => {
    const { ann, viewer, project } = await projectWithReaders(t);
    const space = await defaultSpace(t, ann, project.id);
    await cloudAgent(t);
    const frame = await newFrame(t, ann, project.id, space, {});
    const path = framePath(frame);
    expectProblem(await t.post(`${path}/restart`, { token: ann.token }), 409, 'nothing_serving');
    const deployments = (await t.get(`${path}/deployments`, { token: ann.token })).json.data;
    const never = deployments[0].id;
    expectProblem(
      await t.post(`${path}/deployments/${never}/rollback`, { token: ann.token }),
      409,
      'not_a_release',
    );
    expectProblem(
      await t.post(`${path}/deployments/dep_nosuchdeployment000000000000/rollback`, {
        token: ann.token,
      }),
      404,
      'deployment_not_found',
    );
    expectProblem(await t.post(`${path}/restart`, { token: viewer.token }), 403);
    expectProblem(
      await t.post(`${path}/deployments/${never}/rollback`, { token: viewer.token }),
      403,
    );
  });
});
