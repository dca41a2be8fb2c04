// A project's life over HTTP (CONTRACT 3): create (with its default space), rename, list, delete,
// and what a deletion takes with it. Deleting a project removes in one statement everything that
// belongs to it (spaces, frames and all they hold, self-hosted agents, grants, the webhook secret
// and remembered deliveries); the audit trail, the teams it was shared with and the cloud agents
// stay.
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
} from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const auditOf = (projectId: string) =>
  t.db
    .selectFrom('audit_events')
    .select(['action', 'actor_id', 'before', 'after'])
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();

describe('create', () => {
  it('answers the project with the owner role, one space named default, and an audit record', async () => {
    const ann = await newUser(t, 'ann');
    const r = await t.post('/v2/projects', { token: ann.token, body: { name: 'Shop' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^prj_/),
      name: 'Shop',
      owner_id: ann.id,
      owner_kind: 'user',
      role: 'owner',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const spaces = await t.get(`/v2/projects/${r.json.id}/spaces`, { token: ann.token });
    expect(spaces.json.data).toEqual([
      {
        id: expect.stringMatching(/^spc_/),
        project_id: r.json.id,
        name: 'default',
        created_at: expect.any(String),
      },
    ]);
    expect(await auditOf(r.json.id)).toEqual([
      { action: 'project.created', actor_id: ann.id, before: null, after: { name: 'Shop' } },
    ]);
    expect((await t.get(`/v2/projects/${r.json.id}`, { token: ann.token })).json).toEqual(r.json);
  });

  it('two projects may share a name; names are one line of 1 to 100 characters', async () => {
    const ann = await newUser(t, 'ann');
    const a = await t.post('/v2/projects', { token: ann.token, body: { name: 'Same' } });
    const b = await t.post('/v2/projects', { token: ann.token, body: { name: 'Same' } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.json.id).not.toBe(b.json.id);
    expect(
      (await t.post('/v2/projects', { token: ann.token, body: { name: 'x'.repeat(100) } })).status,
    ).toBe(201);
    for (const name of ['', 'x'.repeat(101), 'two\nlines', 'tab\there'])
      expectProblem(await t.post('/v2/projects', { token: ann.token, body: { name } }), 422);
    expectProblem(await t.post('/v2/projects', { token: ann.token, body: {} }), 422);
    expectProblem(
      await t.post('/v2/projects', { token: ann.token, body: { name: 'ok', owner_id: 'x' } }),
      422,
    );
    expectProblem(await t.post('/v2/projects', { body: { name: 'anonymous' } }), 401);
  });
});

describe('rename', () => {
  it('an admin renames; the answer carries the caller role; the audit keeps before and after', async () => {
    const owner = await newUser(t, 'owner');
    const admin = await newUser(t, 'admin');
    const project = await newProject(t, owner, 'Before');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, admin, 'admin');
    await share(t, team.id, project.id, 'admin');

    const r = await t.patch(`/v2/projects/${project.id}`, {
      token: admin.token,
      body: { name: 'After' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      id: project.id,
      name: 'After',
      owner_id: owner.id,
      role: 'admin',
    });
    const list = await t.get('/v2/projects', { token: owner.token });
    expect(list.json.data.find((p: any) => p.id === project.id)).toMatchObject({
      name: 'After',
      role: 'owner',
    });
    expect((await auditOf(project.id)).at(-1)).toEqual({
      action: 'project.renamed',
      actor_id: admin.id,
      before: { name: 'Before' },
      after: { name: 'After' },
    });
    expectProblem(
      await t.patch(`/v2/projects/${project.id}`, { token: admin.token, body: { name: '' } }),
      422,
    );
    expect((await t.get(`/v2/projects/${project.id}`, { token: owner.token })).json.name).toBe(
      'After',
    );
  });
});

describe('list', () => {
  it('owned and shared projects once each, at the highest role, in id order, page by page', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const own = await newProject(t, ann, 'Own');
    const shared = await newProject(t, bob, 'Shared twice');
    const hidden = await newProject(t, bob, 'Not shared');
    const viewers = await newTeam(t, bob, 'Viewers');
    const members = await newTeam(t, bob, 'Members');
    await addMember(t, viewers.id, ann, 'admin');
    await addMember(t, members.id, ann, 'member');
    await share(t, viewers.id, shared.id, 'viewer');
    const memberGrant = await share(t, members.id, shared.id, 'admin');

    const all = await t.get('/v2/projects', { token: ann.token });
    expect(all.json.data.map((p: any) => [p.id, p.role])).toEqual([
      [own.id, 'owner'],
      [shared.id, 'member'],
    ]);
    expect(all.json.data.map((p: any) => p.id)).not.toContain(hidden.id);

    const first = await t.get('/v2/projects?limit=1', { token: ann.token });
    expect(first.json.data.map((p: any) => p.id)).toEqual([own.id]);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await t.get(`/v2/projects?limit=1&cursor=${first.json.next_cursor}`, {
      token: ann.token,
    });
    expect(second.json.data.map((p: any) => p.id)).toEqual([shared.id]);
    expect(second.json.next_cursor).toBeNull();

    // One path removed: listed at the role of the path that is left.
    const revoke = await t.del(`/v2/teams/${members.id}/grants/${memberGrant}`, {
      token: bob.token,
    });
    expect(revoke.status, revoke.text).toBe(204);
    expect(
      (await t.get('/v2/projects', { token: ann.token })).json.data.map((p: any) => [p.id, p.role]),
    ).toEqual([
      [own.id, 'owner'],
      [shared.id, 'viewer'],
    ]);
  });

  it('a new user lists nothing', async () => {
    const cid = await newUser(t, 'cid');
    const r = await t.get('/v2/projects', { token: cid.token });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual([]);
  });
});

describe('delete', () => {
  it('only the owner deletes; a repeat is 404', async () => {
    const owner = await newUser(t, 'owner');
    const admin = await newUser(t, 'admin');
    const project = await newProject(t, owner);
    const team = await newTeam(t, owner);
    await addMember(t, team.id, admin, 'admin');
    await share(t, team.id, project.id, 'admin');
    expectProblem(
      await t.del(`/v2/projects/${project.id}`, { token: admin.token }),
      403,
      'insufficient_role',
    );
    expect((await t.get(`/v2/projects/${project.id}`, { token: admin.token })).status).toBe(200);
    expect((await t.del(`/v2/projects/${project.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(
      await t.del(`/v2/projects/${project.id}`, { token: owner.token }),
      404,
      'project_not_found',
    );
  });

  it('takes spaces, frames and all they hold, agents, grants and the webhook; keeps the audit, the team and the cloud agent', async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const project = await newProject(t, owner, 'Doomed');
    const team = await newTeam(t, owner, 'Stays');
    await addMember(t, team.id, member, 'member');
    await share(t, team.id, project.id, 'member');
    const path = `/v2/projects/${project.id}`;
    const space = await defaultSpace(t, owner, project.id);
    const staging = await t.post(`${path}/spaces`, {
      token: owner.token,
      body: { name: 'staging' },
    });
    expect(staging.status, staging.text).toBe(201);

    const cloud = await cloudAgent(t, 'cloud-for-delete');
    const frame = await newFrame(t, owner, project.id, space, {
      name: 'web',
      git_repository: 'doomed',
    });
    const fp = framePath(frame);
    const hostname = `doomed-${frame.id.slice(-8).toLowerCase()}.example.com`;
    for (const [url, body] of [
      [`${fp}/domains`, { hostname }],
      [`${fp}/volumes`, { name: 'data', mount_path: '/data', size_gb: 1 }],
    ] as const) {
      const r = await t.post(url, { token: owner.token, body });
      expect(r.status, r.text).toBe(201);
    }
    expect(
      (await t.put(`${fp}/env`, { token: owner.token, body: { vars: { A: '1' } } })).status,
    ).toBe(200);
    const hosted = await t.post(`${path}/agents`, { token: owner.token, body: { name: 'edge' } });
    expect(hosted.status, hosted.text).toBe(201);
    await sync(t, hosted.json.token);
    const state = await sync(t, cloud.token, {
      events: [{ frame_id: frame.id, replica: 0, type: 'healthy' }],
      logs: [{ frame_id: frame.id, replica: 0, at: t.clock.now().toISOString(), line: 'hi' }],
    });
    expect(state.frames.map((f) => f.frame_id)).toContain(frame.id);
    const secret = (await t.get(`${path}/webhook`, { token: owner.token })).json.secret;
    const push = JSON.stringify({
      ref: 'refs/heads/main',
      after: 'e'.repeat(40),
      repository: { name: 'doomed', owner: { login: 'acme' } },
    });
    const hook = await t.post('/v2/hooks/git', {
      raw: push,
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(push).digest('hex')}`,
      },
    });
    expect(hook.status, hook.text).toBe(202);

    const rowsOf = async () => {
      const byFrame = async (
        table:
          | 'deployments'
          | 'frame_env'
          | 'domains'
          | 'volumes'
          | 'frame_events'
          | 'frame_logs'
          | 'frame_replicas',
      ) =>
        (await t.db.selectFrom(table).select('frame_id').where('frame_id', '=', frame.id).execute())
          .length;
      // Plain SQL: webhook_deliveries has no row type in src/db/schema.ts.
      const byProject = async (
        table:
          | 'spaces'
          | 'frames'
          | 'agents'
          | 'grants'
          | 'project_webhooks'
          | 'webhook_deliveries',
      ) =>
        (
          await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}
            where project_id = ${project.id}`.execute(t.db)
        ).rows[0]!.n;
      return {
        spaces: await byProject('spaces'),
        frames: await byProject('frames'),
        agents: await byProject('agents'),
        grants: await byProject('grants'),
        webhook: await byProject('project_webhooks'),
        deliveries: await byProject('webhook_deliveries'),
        deployments: await byFrame('deployments'),
        env: await byFrame('frame_env'),
        domains: await byFrame('domains'),
        volumes: await byFrame('volumes'),
        events: await byFrame('frame_events'),
        logs: await byFrame('frame_logs'),
        replicas: await byFrame('frame_replicas'),
      };
    };
    const before = await rowsOf();
    for (const [k, v] of Object.entries(before)) expect(v, k).toBeGreaterThan(0);
    const auditBefore = (await auditOf(project.id)).length;

    expect((await t.del(path, { token: owner.token })).status).toBe(204);

    expect(
      Object.values(await rowsOf()).every((n) => n === 0),
      JSON.stringify(await rowsOf()),
    ).toBe(true);
    // Gone for everyone who reached it.
    for (const who of [owner, member]) {
      expectProblem(await t.get(path, { token: who.token }), 404, 'project_not_found');
      expectProblem(await t.get(fp, { token: who.token }), 404, 'project_not_found');
      expect(
        (await t.get('/v2/projects', { token: who.token })).json.data.map((p: any) => p.id),
      ).not.toContain(project.id);
    }
    // The self-hosted agent's token died with it; the cloud agent no longer runs the frame.
    expectProblem(await t.post('/v2/agent/sync', { token: hosted.json.token, body: {} }), 401);
    expect((await sync(t, cloud.token)).frames.map((f) => f.frame_id)).not.toContain(frame.id);
    expect(
      await t.db.selectFrom('agents').select('id').where('id', '=', cloud.id).execute(),
    ).toHaveLength(1);
    // The team and its membership stay; only the grant went.
    const members = await t.get(`/v2/teams/${team.id}/members`, { token: owner.token });
    expect(members.status).toBe(200);
    expect(members.json.data.map((m: any) => m.user_id).sort()).toEqual(
      [owner.id, member.id].sort(),
    );
    expect((await t.get(`/v2/teams/${team.id}/grants`, { token: owner.token })).json.data).toEqual(
      [],
    );
    // The history outlives the project, with its deletion as the last word.
    const audit = await auditOf(project.id);
    expect(audit.length).toBe(auditBefore + 1);
    expect(audit.at(-1)).toMatchObject({ action: 'project.deleted', actor_id: owner.id });
  });

  it('a space that still holds frames is not deleted alone (409); an empty one is', async () => {
    const owner = await newUser(t, 'owner');
    const project = await newProject(t, owner);
    const path = `/v2/projects/${project.id}`;
    const s = await t.post(`${path}/spaces`, { token: owner.token, body: { name: 'busy' } });
    await newFrame(t, owner, project.id, s.json.id, { name: 'web' });
    expectProblem(
      await t.del(`${path}/spaces/${s.json.id}`, { token: owner.token }),
      409,
      'space_not_empty',
    );
    const empty = await t.post(`${path}/spaces`, { token: owner.token, body: { name: 'empty' } });
    expect((await t.del(`${path}/spaces/${empty.json.id}`, { token: owner.token })).status).toBe(
      204,
    );
    // The project itself goes with its busy space and the frame in it.
    expect((await t.del(path, { token: owner.token })).status).toBe(204);
    expect(
      await t.db.selectFrom('spaces').select('id').where('project_id', '=', project.id).execute(),
    ).toEqual([]);
  });
});
