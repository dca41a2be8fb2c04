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
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const push = (branch: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    ref: `refs/heads/${branch}`,
    after: 'a'.repeat(40),
    repository: { name: 'App', owner: { login: 'Acme' }, full_name: 'Acme/App' },
    pusher: { name: 'x' },
    commits: [],
    ...extra,
  });

describe('git push webhook', () => {
  it('shows and rotates the secret (admin only), deploys watching frames on a signed push, refuses a bad signature', async () => {
    const ann = await newUser(t, 'ann');
    const viewer = await newUser(t, 'viewer');
    const project = await newProject(t, ann);
    const team = await newTeam(t, ann);
    await addMember(t, team.id, viewer, 'viewer');
    await share(t, team.id, project.id, 'viewer');
    const space = await defaultSpace(t, ann, project.id);
    const main = await newFrame(t, ann, project.id, space, {
      name: 'main',
      git_repository: 'app',
      git_repository_owner: 'acme',
      git_repository_branch: 'main',
    });
    const other = await newFrame(t, ann, project.id, space, {
      name: 'other',
      git_repository: 'app',
      git_repository_owner: 'acme',
      git_repository_branch: 'dev',
    });

    const hook = await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token });
    expect(hook.status).toBe(200);
    expect(hook.json.url).toBe(`http://frameplane.test/v2/hooks/git?project=${project.id}`);
    expect(
      (await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token })).json.secret,
    ).toBe(hook.json.secret);
    expectProblem(await t.get(`/v2/projects/${project.id}/webhook`, { token: viewer.token }), 403);

    const body = push('main');
    const bad = await t.post('/v2/hooks/git', {
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': sign('wrong', body),
      },
    });
    expectProblem(bad, 401, 'invalid_signature');
    expect(
      await t.db.selectFrom('deployments').select('id').where('frame_id', '=', main.id).execute(),
    ).toHaveLength(1);

    // Without ?project the service finds the project by the frames watching the branch.
    const ok = await t.post('/v2/hooks/git', {
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': sign(hook.json.secret, body),
      },
    });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.json.deployments.map((d: any) => d.frame_id)).toEqual([main.id]);
    const history = await t.get(`${framePath(main)}/deployments`, { token: ann.token });
    expect(history.json.data[0]).toMatchObject({ trigger: 'push', commit_sha: 'a'.repeat(40) });
    expect(
      (await t.get(`${framePath(other)}/deployments`, { token: ann.token })).json.data,
    ).toHaveLength(1);

    const rotated = await t.post(`/v2/projects/${project.id}/webhook`, { token: ann.token });
    expect(rotated.json.secret).not.toBe(hook.json.secret);
    const stale = await t.post(`/v2/hooks/git?project=${project.id}`, {
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': sign(hook.json.secret, body),
      },
    });
    expectProblem(stale, 401);
    const ping = await t.post(`/v2/hooks/git?project=${project.id}`, {
      raw: '{"zen":"hi"}',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-hub-signature-256': sign(rotated.json.secret, '{"zen":"hi"}'),
      },
    });
    expect(ping.status).toBe(202);
    expect(ping.json.deployments).toEqual([]);
  });

  it('a push clears a back-off trip and restarts the frame, but does not start a frame stopped by hand', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const tripped = await newFrame(t, ann, project.id, space, {
      name: 't',
      git_repository_owner: 'o2',
      git_repository: 'r2',
      git_repository_branch: 'main',
    });
    const stopped = await newFrame(t, ann, project.id, space, {
      name: 's',
      git_repository_owner: 'o2',
      git_repository: 'r2',
      git_repository_branch: 'main',
    });
    await t.db
      .updateTable('frames')
      .set({ desired_state: 'stopped', backoff_tripped_at: new Date() })
      .where('id', '=', tripped.id)
      .execute();
    await t.post(`${framePath(stopped)}/stop`, { token: ann.token });
    const { secret } = (await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token }))
      .json;
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      after: 'b'.repeat(40),
      repository: { name: 'r2', owner: { name: 'o2' } },
    });
    const r = await t.post(`/v2/hooks/git?project=${project.id}`, {
      raw: body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(secret, body) },
    });
    expect(r.status, r.text).toBe(202);
    expect(r.json.deployments).toHaveLength(2);
    expect((await t.get(framePath(tripped), { token: ann.token })).json).toMatchObject({
      desired_state: 'running',
      status: 'Starting',
      backoff: { tripped_at: null },
    });
    expect((await t.get(framePath(stopped), { token: ann.token })).json).toMatchObject({
      desired_state: 'stopped',
      status: 'Stopped',
    });
  });
});

describe('git push webhook: replay and probing (issue 12, item 10)', () => {
  const headers = (
    body: string,
    secret: string | undefined,
    extra: Record<string, string> = {},
  ) => ({
    'content-type': 'application/json',
    'x-github-event': 'push',
    ...(secret ? { 'x-hub-signature-256': sign(secret, body) } : {}),
    ...extra,
  });
  const deploymentsOf = async (frameId: string) =>
    (await t.db.selectFrom('deployments').select('id').where('frame_id', '=', frameId).execute())
      .length;
  async function watched(owner: string, repo: string) {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space, {
      name: 'web',
      git_repository_owner: owner,
      git_repository: repo,
      git_repository_branch: 'main',
    });
    const { secret } = (await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token }))
      .json;
    return { ann, project, frame, secret: secret as string };
  }
  const pushOf = (
    owner: string,
    repo: string,
    after: string,
    extra: Record<string, unknown> = {},
  ) =>
    JSON.stringify({
      ref: 'refs/heads/main',
      after,
      repository: {
        name: repo,
        owner: { login: owner },
        pushed_at: Math.floor(t.clock.now().getTime() / 1000),
      },
      ...extra,
    });

  it('a delivery sent again deploys nothing: same id, another id (the header is unsigned), no id; 200 duplicate', async () => {
    const { project, frame, secret } = await watched('rp', 'app');
    const body = pushOf('rp', 'app', 'c'.repeat(40));
    const first = await t.post('/v2/hooks/git', {
      raw: body,
      headers: headers(body, secret, { 'x-github-delivery': 'd-1' }),
    });
    expect(first.status, first.text).toBe(202);
    expect(first.json.deployments).toHaveLength(1);
    expect(first.json.duplicate).toBeUndefined();
    expect(await deploymentsOf(frame.id)).toBe(2);
    for (const extra of [
      { 'x-github-delivery': 'd-1' },
      { 'x-github-delivery': 'd-forged' },
      {} as Record<string, string>,
    ]) {
      for (const url of ['/v2/hooks/git', `/v2/hooks/git?project=${project.id}`]) {
        const again = await t.post(url, { raw: body, headers: headers(body, secret, extra) });
        expect(again.status, again.text).toBe(200);
        expect(again.json).toEqual({
          event: 'push',
          duplicate: true,
          deployments: [],
          previews: [],
        });
      }
    }
    expect(await deploymentsOf(frame.id)).toBe(2);

    // A different delivery reusing an id already seen is a repeat too; a new one deploys.
    const other = pushOf('rp', 'app', 'd'.repeat(40), { pusher: { name: 'x' } });
    expect(
      (
        await t.post('/v2/hooks/git', {
          raw: other,
          headers: headers(other, secret, { 'x-github-delivery': 'd-1' }),
        })
      ).json.duplicate,
    ).toBe(true);
    const fresh = await t.post('/v2/hooks/git', {
      raw: other,
      headers: headers(other, secret, { 'x-github-delivery': 'd-2' }),
    });
    expect(fresh.status, fresh.text).toBe(202);
    expect(await deploymentsOf(frame.id)).toBe(3);
    // Without a delivery id (other git hosts) a delivery is accepted once, known by its body.
    const noId = pushOf('rp', 'app', 'e'.repeat(40), { n: 1 });
    expect(
      (await t.post('/v2/hooks/git', { raw: noId, headers: headers(noId, secret) })).status,
    ).toBe(202);
    expect(
      (await t.post('/v2/hooks/git', { raw: noId, headers: headers(noId, secret) })).status,
    ).toBe(200);
    expect(await deploymentsOf(frame.id)).toBe(4);
  });

  it('ten concurrent copies of one delivery make one deployment', async () => {
    const { frame, secret } = await watched('rc', 'app');
    const body = pushOf('rc', 'app', 'f'.repeat(40));
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.post('/v2/hooks/git', {
          raw: body,
          headers: headers(body, secret, { 'x-github-delivery': 'same' }),
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 202,
    ]);
    expect(answers.filter((a) => a.json.deployments.length === 1)).toHaveLength(1);
    expect(await deploymentsOf(frame.id)).toBe(2);
  });

  it('an unsigned or badly signed push answers the same whether or not anything watches it', async () => {
    const { project, secret } = await watched('secretco', 'payroll');
    const stranger = await newUser(t, 'stranger');
    const unwatchedProject = await newProject(t, stranger);
    const probe = (owner: string, repo: string) => pushOf(owner, repo, '1'.repeat(40));
    const shape = (r: { status: number; json: any; headers: Record<string, unknown> }) => {
      const { request_id: _id, ...body } = r.json;
      return { status: r.status, body, authenticate: r.headers['www-authenticate'] ?? null };
    };
    const cases: Array<[string, string, Record<string, string>]> = [];
    for (const [owner, repo] of [
      ['secretco', 'payroll'],
      ['nobody', 'nothing'],
    ] as const) {
      const body = probe(owner, repo);
      for (const url of [
        '/v2/hooks/git',
        `/v2/hooks/git?project=${project.id}`,
        `/v2/hooks/git?project=${unwatchedProject.id}`,
        '/v2/hooks/git?project=prj_none',
      ]) {
        cases.push([url, body, headers(body, undefined)]);
        cases.push([url, body, headers(body, 'whsec_wrong')]);
        cases.push([
          url,
          body,
          { ...headers(body, undefined), 'x-hub-signature-256': 'sha256=zz' },
        ]);
      }
    }
    const answers = [];
    for (const [url, body, h] of cases)
      answers.push(shape(await t.post(url, { raw: body, headers: h })));
    expect(answers[0]).toMatchObject({ status: 401, body: { code: 'invalid_signature' } });
    for (const a of answers) expect(a).toEqual(answers[0]);
    // The owner's signed push still works, and a signed push to another branch is acknowledged.
    const body = probe('secretco', 'payroll');
    expect(
      (await t.post('/v2/hooks/git', { raw: body, headers: headers(body, secret) })).status,
    ).toBe(202);
    const dev = JSON.stringify({
      ref: 'refs/heads/dev',
      repository: { name: 'payroll', owner: { login: 'secretco' } },
    });
    const r = await t.post('/v2/hooks/git', { raw: dev, headers: headers(dev, secret) });
    expect(r.status, r.text).toBe(202);
    expect(r.json.deployments).toEqual([]);
  });

  it('a push older than the delivery memory is refused, so an old capture cannot roll a frame back', async () => {
    const { frame, secret } = await watched('old', 'app');
    const days = (n: number) => Math.floor(t.clock.now().getTime() / 1000) - n * 86400;
    const at = (pushed: unknown, after: string) =>
      JSON.stringify({
        ref: 'refs/heads/main',
        after,
        repository: { name: 'app', owner: { login: 'old' }, pushed_at: pushed },
      });
    for (const pushed of [days(8), new Date(days(8) * 1000).toISOString()]) {
      const body = at(pushed, '2'.repeat(40));
      expectProblem(
        await t.post('/v2/hooks/git', { raw: body, headers: headers(body, secret) }),
        422,
        'stale_delivery',
      );
    }
    expect(await deploymentsOf(frame.id)).toBe(1);
    const recent = at(days(6), '3'.repeat(40));
    expect(
      (await t.post('/v2/hooks/git', { raw: recent, headers: headers(recent, secret) })).status,
    ).toBe(202);
    expect(await deploymentsOf(frame.id)).toBe(2);
    // Once the memory of it has expired, the same capture is stale rather than new.
    await t.clock.advance(2 * 86400);
    expect(
      (await t.post('/v2/hooks/git', { raw: recent, headers: headers(recent, secret) })).status,
    ).toBe(422);
    expect(await deploymentsOf(frame.id)).toBe(2);
    // Expired memories are forgotten when the next delivery arrives.
    const expired = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`select count(*) as n from webhook_deliveries where keep_until < ${t.clock.now()}`.execute(
            t.db,
          )
        ).rows[0]!.n,
      );
    expect(await expired()).toBeGreaterThan(0);
    const next = at(days(0), '4'.repeat(40));
    expect(
      (await t.post('/v2/hooks/git', { raw: next, headers: headers(next, secret) })).status,
    ).toBe(202);
    expect(await expired()).toBe(0);
  });
});
