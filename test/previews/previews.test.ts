// Preview frames (issue 36), at the API with signed deliveries and a scripted agent: a push to
// another branch makes a preview with its own hostname, the parent's settings and env plus its
// overrides, and no custom domain; a second push updates it; a pull request makes one of its
// head branch, its update deploys once, and closing it removes it; a deleted branch removes
// its preview; expiry by the service clock removes an idle one; a fork's pull request and a
// frame that did not opt in make none; viewers read previews and cannot change their settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { gitHost } from '../helpers/webhooks.ts';
import { expectProblem, projectWithReaders } from '../helpers/factories.ts';
import { ADMIN, cloudAgent, defaultSpace, framePath, newFrame, toldOf } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const SHA = (c: string) => c.repeat(40);
const DAY = 86400;

async function setup() {
  const { ann, viewer, project } = await projectWithReaders(t);
  const space = await defaultSpace(t, ann, project.id);
  const agent = await cloudAgent(t);
  const frame = await newFrame(t, ann, project.id, space, { replica_count: 2 });
  const path = framePath(frame);
  const { push, pr } = await gitHost(t, ann.token, project.id);
  const previews = async () =>
    (await t.get(`${path}/previews`, { token: ann.token })).json.data as any[];
  return { ann, viewer, project, agent, frame, path, push, pr, previews };
}

const enable = (t: TestApp, token: string, path: string, previews: Record<string, unknown>) =>
  t.patch(path, { token, body: { previews } });

describe('preview frames', () => {
  it('a push to a branch makes one, a second updates it, a deletion removes it', async () => {
    const { ann, viewer, agent, frame, path, push, previews } = await setup();
    expect((await push('feature/login', SHA('9'))).previews).toEqual([]);

    expect(
      (await t.put(`${path}/env`, { token: ann.token, body: { vars: { A: 'a' } } })).status,
    ).toBe(200);
    expectProblem(await enable(t, viewer.token, path, { enabled: true }), 403);
    const on = await enable(t, ann.token, path, {
      enabled: true,
      ttl_days: 3,
      env: { A: 'preview', DEBUG: '1' },
    });
    expect(on.status, on.text).toBe(200);
    expect(on.json.previews).toEqual({ enabled: true, ttl_days: 3, env_keys: ['A', 'DEBUG'] });
    // The audit log names the overrides, never their values.
    const audit = await t.db
      .selectFrom('audit_events')
      .select('after')
      .where('target_id', '=', frame.id)
      .where('action', '=', 'frame.updated')
      .execute();
    expect(JSON.stringify(audit)).not.toContain('preview"');

    const made = await push('feature/login', SHA('1'));
    expect(made.deployments).toEqual([]);
    expect(made.previews).toEqual([
      {
        frame_id: expect.any(String),
        preview_of: frame.id,
        branch: 'feature/login',
        action: 'created',
        deployment_id: expect.any(String),
      },
    ]);
    const id = made.previews[0].frame_id;
    const [p] = await previews();
    expect(p).toMatchObject({
      id,
      name: 'web-feature/login',
      git_repository_branch: 'feature/login',
      port: frame.port,
      replica_count: 2,
      preview: { of: frame.id, branch: 'feature/login', pull_request: null },
      previews: { enabled: false },
    });
    expect(p.hostname).not.toBe(frame.hostname);
    expect(p.hostname).toMatch(/^web-feature-login-[a-z0-9]{6}\./);
    expect(Date.parse(p.preview.expires_at) - Date.parse(p.preview.pushed_at)).toBe(3 * DAY * 1000);
    const previewPath = `${path.slice(0, path.lastIndexOf('/'))}/${id}`;
    const env = await t.get(`${previewPath}/env`, { token: ann.token });
    expect(env.json.vars).toEqual({ A: 'preview', DEBUG: '1' });
    expect((await t.get(`${previewPath}/domains`, { token: ann.token })).json.data).toEqual([]);
    expect(await toldOf(t, agent.token, id)).toMatchObject({
      git_repository_branch: 'feature/login',
      commit_sha: SHA('1'),
      env: { A: 'preview', DEBUG: '1' },
    });
    // Viewers read previews as any frame; a preview has none of its own.
    expect((await t.get(`${path}/previews`, { token: viewer.token })).json.data).toHaveLength(1);
    expectProblem(
      await enable(t, ann.token, previewPath, { enabled: true }),
      422,
      'preview_of_preview',
    );

    const again = await push('feature/login', SHA('2'));
    expect(again.previews).toMatchObject([{ frame_id: id, action: 'updated' }]);
    expect(await toldOf(t, agent.token, id)).toMatchObject({ commit_sha: SHA('2') });
    expect(await previews()).toHaveLength(1);
    // The parent's own branch deploys the parent, not a preview.
    const main = await push('main', SHA('3'));
    expect(main.deployments).toMatchObject([{ frame_id: frame.id }]);
    expect(main.previews).toEqual([]);

    const gone = await push('feature/login', SHA('0'), true);
    expect(gone.previews).toMatchObject([{ frame_id: id, action: 'deleted' }]);
    expect(await previews()).toEqual([]);
    expectProblem(await t.get(previewPath, { token: ann.token }), 404);
    const events = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data;
    expect(events.map((e: any) => e.type)).toEqual(
      expect.arrayContaining(['preview_created', 'preview_deleted']),
    );
  });

  it('a pull request makes one, its update deploys once, closing it removes it; forks make none', async () => {
    const { ann, path, push, pr, previews } = await setup();
    expect((await enable(t, ann.token, path, { enabled: true })).status).toBe(200);
    expect((await pr('opened', 7, 'fix', SHA('a'), true)).previews).toEqual([]);

    const opened = await pr('opened', 7, 'fix', SHA('a'));
    expect(opened.previews).toMatchObject([{ action: 'created', branch: 'fix' }]);
    expect((await previews())[0].preview).toMatchObject({ branch: 'fix', pull_request: 7 });
    // The push under a pull request's update names the same commit: one deployment.
    expect((await push('fix', SHA('b'))).previews).toMatchObject([{ action: 'updated' }]);
    expect((await pr('synchronize', 7, 'fix', SHA('b'))).previews).toMatchObject([
      { action: 'skipped', skipped: 'already_deployed', deployment_id: null },
    ]);
    const closed = await pr('closed', 7, 'fix', SHA('b'));
    expect(closed.previews).toMatchObject([{ action: 'deleted' }]);
    expect(await previews()).toEqual([]);
  });

  it('an idle preview expires by the service clock; a push keeps it; the parent takes its previews', async () => {
    const { ann, frame, path, push, previews } = await setup();
    expect((await enable(t, ann.token, path, { enabled: true, ttl_days: 2 })).status).toBe(200);
    await push('idle', SHA('c'));
    await push('busy', SHA('d'));
    const advance = (seconds: number) =>
      t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
    expect((await advance(DAY + 60)).status).toBe(200);
    await push('busy', SHA('e'));
    expect((await previews()).map((p) => p.preview.branch).sort()).toEqual(['busy', 'idle']);
    expect((await advance(DAY)).status).toBe(200);
    expect((await previews()).map((p) => p.preview.branch)).toEqual(['busy']);
    const events = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data;
    expect(events.find((e: any) => e.type === 'preview_deleted')?.detail).toMatchObject({
      branch: 'idle',
      reason: 'expired',
    });
    // A shorter time to live applies to existing previews at once.
    expect((await enable(t, ann.token, path, { ttl_days: 1 })).status).toBe(200);
    expect((await advance(60)).status).toBe(200);
    expect(await previews()).toEqual([]);

    await push('late', SHA('f'));
    const [late] = await previews();
    const deleted = await t.del(path, { token: ann.token });
    expect(deleted.status, deleted.text).toBe(200);
    expect(
      await t.db.selectFrom('frames').select('id').where('id', '=', late.id).execute(),
    ).toEqual([]);
    expect(frame.id).toBeTruthy();
  });

  it('concurrent deliveries make one preview per branch, and none fails', async () => {
    const { ann, path, push, pr, previews } = await setup();
    expect((await enable(t, ann.token, path, { enabled: true })).status).toBe(200);
    const answers = await Promise.all([
      ...['1', '2', '3', '4'].map((c) => push('race', SHA(c))),
      pr('opened', 9, 'race', SHA('5')),
      push('other', SHA('6')),
      push('main', SHA('7')),
    ]);
    const made = answers.flatMap((a) => a.previews).filter((p: any) => p.action === 'created');
    expect(made.map((p: any) => p.branch).sort()).toEqual(['other', 'race']);
    expect((await previews()).map((p) => p.preview.branch).sort()).toEqual(['other', 'race']);
  });
});
