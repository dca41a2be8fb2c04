// Releases (issue 36), what people read and apply, at the API with a scripted agent: a release
// says what it ran (image, settings) and what it changed against the one before (values for
// members, names for viewers); `?deploy=true` on an env, settings or volume write starts a
// config release of the serving build, or changes nothing when it is refused; a rollback pauses push
// deploys until someone resumes them, and a push meanwhile is told on the frame.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { gitHost } from '../helpers/webhooks.ts';
import { expectProblem, projectWithReaders } from '../helpers/factories.ts';
import {
  ADMIN,
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  serveAt,
  sync,
  toldOf,
} from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const SHA = (c: string) => c.repeat(40);
const IMAGE = (c: string) => `sha256:${c.repeat(64)}`;

async function setup() {
  const { ann, viewer, project } = await projectWithReaders(t);
  const space = await defaultSpace(t, ann, project.id);
  const agent = await cloudAgent(t);
  const frame = await newFrame(t, ann, project.id, space, {});
  const path = framePath(frame);
  /** The agent builds what it is told at `sha`, reports `image`, and serves it. */
  const serve = async (sha: string, image?: string) => {
    const d = await toldOf(t, agent.token, frame.id);
    if (image)
      await sync(t, agent.token, {
        builds: [{ deployment_id: d.deployment_id, state: 'succeeded', commit_sha: sha, image }],
      });
    return serveAt(t, agent.token, frame.id, sha);
  };
  const deploy = async () => {
    const r = await t.post(`${path}/deploy`, { token: ann.token, body: {} });
    expect(r.status, r.text).toBe(202);
    return r.json;
  };
  return { ann, viewer, project, agent, frame, path, serve, deploy };
}

describe('a release says what it ran and what it changed', () => {
  it('commit range, env keys with values for members and names for viewers, settings, image', async () => {
    const { ann, viewer, path, serve, deploy } = await setup();
    const env = (vars: Record<string, string>) =>
      t.put(`${path}/env`, { token: ann.token, body: { vars } });
    expect((await env({ KEEP: 'k', OLD: 'o', CHG: '1' })).status).toBe(200);
    const v1 = await deploy();
    await serve(SHA('a'), IMAGE('a'));
    expect((await env({ KEEP: 'k', CHG: '2', NEW: 'n' })).status).toBe(200);
    const patched = await t.patch(path, { token: ann.token, body: { health_check_path: '/hz' } });
    expect(patched.status, patched.text).toBe(200);
    const v2 = await deploy();
    await serve(SHA('b'), IMAGE('b'));

    const shown = await t.get(`${path}/deployments/${v2.id}`, { token: ann.token });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json).toMatchObject({
      id: v2.id,
      status: 'succeeded',
      commit_sha: SHA('b'),
      image: IMAGE('b'),
      settings: { port: 8080, replica_count: 1, health_check_path: '/hz' },
      changes: {
        against: v1.id,
        commits: { from: SHA('a'), to: SHA('b') },
        env: {
          added: [{ key: 'NEW', to: 'n' }],
          changed: [{ key: 'CHG', from: '1', to: '2' }],
          removed: [{ key: 'OLD', from: 'o' }],
        },
        settings: [{ field: 'health_check_path', from: '/', to: '/hz' }],
      },
    });
    const first = await t.get(`${path}/deployments/${v1.id}`, { token: ann.token });
    expect(first.json).toMatchObject({ image: IMAGE('a'), changes: null });

    // A viewer reads the same release with names only; the list carries the same summary.
    const seen = await t.get(`${path}/deployments/${v2.id}`, { token: viewer.token });
    expect(seen.status).toBe(200);
    expect(seen.json.changes.env).toEqual({
      added: [{ key: 'NEW' }],
      changed: [{ key: 'CHG' }],
      removed: [{ key: 'OLD' }],
    });
    expect(JSON.stringify(seen.json)).not.toMatch(/"(n|o|1|2)"/);
    const listed = await t.get(`${path}/deployments`, { token: viewer.token });
    // The frame's creation made a deployment that never served: it is no release.
    expect(listed.json.data.map((d: any) => d.id).slice(0, 2)).toEqual([v2.id, v1.id]);
    expect(listed.json.data.map((d: any) => d.changes)).toEqual([seen.json.changes, null, null]);
    // A page of one still compares with the release before it.
    const paged = await t.get(`${path}/deployments?limit=1`, { token: ann.token });
    expect(paged.json.data[0].changes.against).toBe(v1.id);

    expectProblem(
      await t.get(`${path}/deployments/dep_nosuchdeployment000000000000`, { token: ann.token }),
      404,
      'deployment_not_found',
    );
  });
});

describe('config releases: ?deploy=true on an env or settings write', () => {
  it('run the serving build with the new env, build nothing, and change nothing when refused', async () => {
    const { ann, viewer, path, serve, deploy, agent, frame } = await setup();
    await deploy();
    const v1 = await serve(SHA('a'));

    const applied = await t.patch(`${path}/env?deploy=true`, {
      token: ann.token,
      body: { vars: { MODE: 'fast' } },
    });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.json.vars).toEqual({ MODE: 'fast' });
    expect(applied.json.deployment).toMatchObject({
      trigger: 'config',
      release_of: v1.deployment_id,
      commit_sha: SHA('a'),
    });
    expect(await toldOf(t, agent.token, frame.id)).toMatchObject({
      deployment_id: applied.json.deployment.id,
      release_of: v1.deployment_id,
      env: { MODE: 'fast' },
    });
    const c1 = await serve(SHA('a'));
    expect((await t.get(path, { token: ann.token })).json.pending_changes).toEqual([]);

    // A settings write applied the same way; the frame's latest deployment is that release.
    const patched = await t.patch(`${path}?deploy=true`, {
      token: ann.token,
      body: { health_check_path: '/ready' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.latest_deployment).toMatchObject({ trigger: 'config' });
    expect(await toldOf(t, agent.token, frame.id)).toMatchObject({
      release_of: v1.deployment_id,
      health_check_path: '/ready',
    });
    await serve(SHA('a'));
    const shown = await t.get(`${path}/deployments/${patched.json.latest_deployment.id}`, {
      token: ann.token,
    });
    expect(shown.json.changes).toMatchObject({
      against: c1.deployment_id,
      commits: null,
      settings: [{ field: 'health_check_path', from: '/', to: '/ready' }],
    });

    // Without ?deploy the change waits for the next deploy, as before.
    const saved = await t.patch(`${path}/env`, { token: ann.token, body: { vars: { X: '1' } } });
    expect(saved.json.deployment).toBeUndefined();
    expect((await t.get(path, { token: ann.token })).json.pending_changes).toEqual(['env']);

    // Refused (billing past due): neither the env nor a deployment is written.
    const billing = (status: string) =>
      t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status } });
    expect((await billing('past_due')).status).toBe(200);
    const before = (await t.get(`${path}/deployments`, { token: ann.token })).json.data.length;
    expectProblem(
      await t.patch(`${path}/env?deploy=true`, { token: ann.token, body: { vars: { Y: '2' } } }),
      402,
      'billing_past_due',
    );
    expect((await t.get(`${path}/env`, { token: ann.token })).json.vars).toEqual({
      MODE: 'fast',
      X: '1',
    });
    expect((await t.get(`${path}/deployments`, { token: ann.token })).json.data).toHaveLength(
      before,
    );
    expect((await billing('active')).status).toBe(200);
    expectProblem(
      await t.put(`${path}/env?deploy=true`, { token: viewer.token, body: { vars: {} } }),
      403,
    );
  });
});

describe('config releases: ?deploy=true on a volume added or removed', () => {
  it('run the serving build with the new set of volumes, and change nothing when refused', async () => {
    const { ann, path, serve, deploy, agent, frame } = await setup();
    await deploy();
    const v1 = await serve(SHA('a'));
    const volume = { name: 'data', mount_path: '/data', size_gb: 1 };
    const added = await t.post(`${path}/volumes?deploy=true`, { token: ann.token, body: volume });
    expect(added.status, added.text).toBe(201);
    expect(added.json).toMatchObject({
      ...volume,
      deployment: { trigger: 'config', release_of: v1.deployment_id, commit_sha: SHA('a') },
    });
    const told = await toldOf(t, agent.token, frame.id);
    expect(told).toMatchObject({ deployment_id: added.json.deployment.id });
    expect(told.volumes).toEqual([{ id: added.json.id, ...volume }]);
    await serve(SHA('a'));

    const removed = await t.del(`${path}/volumes/${added.json.id}?deploy=true`, {
      token: ann.token,
    });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json.deployment).toMatchObject({
      trigger: 'config',
      release_of: v1.deployment_id,
    });
    expect(await toldOf(t, agent.token, frame.id)).toMatchObject({
      deployment_id: removed.json.deployment.id,
      volumes: [],
    });

    // Refused (billing past due): neither the volume nor a deployment is written.
    const billing = (status: string) =>
      t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status } });
    expect((await billing('past_due')).status).toBe(200);
    const before = (await t.get(`${path}/deployments`, { token: ann.token })).json.data.length;
    expectProblem(
      await t.post(`${path}/volumes?deploy=true`, { token: ann.token, body: volume }),
      402,
      'billing_past_due',
    );
    expect((await t.get(`${path}/volumes`, { token: ann.token })).json.data).toEqual([]);
    expect((await t.get(`${path}/deployments`, { token: ann.token })).json.data).toHaveLength(
      before,
    );
    expect((await billing('active')).status).toBe(200);
  });
});

describe('a rollback pauses push deploys', () => {
  it('until resumed; a push meanwhile deploys nothing and is told on the frame', async () => {
    const { ann, viewer, project, path, serve, deploy } = await setup();
    await deploy();
    const v1 = await serve(SHA('a'));
    await deploy();
    await serve(SHA('b'));
    const back = await t.post(`${path}/deployments/${v1.deployment_id}/rollback`, {
      token: ann.token,
    });
    expect(back.status, back.text).toBe(202);
    const frame = (await t.get(path, { token: ann.token })).json;
    expect(frame.push_deploys).toMatchObject({ enabled: false, paused_by: back.json.id });
    expect(frame.push_deploys.paused_at).toEqual(expect.any(String));

    const host = await gitHost(t, ann.token, project.id);
    const push = async (sha: string) => (await host.push('main', sha)).deployments;
    expect(await push(SHA('c'))).toEqual([
      { frame_id: frame.id, deployment_id: null, skipped: 'push_deploys_paused' },
    ]);
    const latest = (await t.get(`${path}/deployments?limit=1`, { token: ann.token })).json.data[0];
    expect(latest.id).toBe(back.json.id);
    const events = (await t.get(`${path}/events?limit=50`, { token: ann.token })).json.data;
    expect(events.find((e: any) => e.type === 'push_skipped')?.detail).toEqual({
      commit_sha: SHA('c'),
      reason: 'push_deploys_paused',
    });

    expectProblem(
      await t.patch(path, { token: viewer.token, body: { push_deploys: { enabled: true } } }),
      403,
    );
    const resumed = await t.patch(path, {
      token: ann.token,
      body: { push_deploys: { enabled: true } },
    });
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.push_deploys).toEqual({ enabled: true, paused_at: null, paused_by: null });
    const [pushed] = await push(SHA('d'));
    expect(pushed.deployment_id).toEqual(expect.any(String));

    // Paused by hand: paused_by is null.
    const paused = await t.patch(path, {
      token: ann.token,
      body: { push_deploys: { enabled: false } },
    });
    expect(paused.json.push_deploys).toMatchObject({ enabled: false, paused_by: null });
  });
});
