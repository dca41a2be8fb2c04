import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { addMember, expectProblem, newProject, newTeam, newUser, share } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => { t = await testApp(); });
afterAll(async () => { await t.close(); });

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const push = (branch: string, extra: Record<string, unknown> = {}) => JSON.stringify({
  ref: `refs/heads/${branch}`, after: 'a'.repeat(40), repository: { name: 'App', owner: { login: 'Acme' }, full_name: 'Acme/App' },
  pusher: { name: 'x' }, commits: [], ...extra,
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
    const main = await newFrame(t, ann, project.id, space, { name: 'main', git_repository: 'app', git_repository_owner: 'acme', git_repository_branch: 'main' });
    const other = await newFrame(t, ann, project.id, space, { name: 'other', git_repository: 'app', git_repository_owner: 'acme', git_repository_branch: 'dev' });

    const hook = await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token });
    expect(hook.status).toBe(200);
    expect(hook.json.url).toBe(`http://frameplane.test/v2/hooks/git?project=${project.id}`);
    expect((await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token })).json.secret).toBe(hook.json.secret);
    expectProblem(await t.get(`/v2/projects/${project.id}/webhook`, { token: viewer.token }), 403);

    const body = push('main');
    const bad = await t.post('/v2/hooks/git', { raw: body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': sign('wrong', body) } });
    expectProblem(bad, 401, 'invalid_signature');
    expect(await t.db.selectFrom('deployments').select('id').where('frame_id', '=', main.id).execute()).toHaveLength(1);

    // Without ?project the service finds the project by the frames watching the branch.
    const ok = await t.post('/v2/hooks/git', { raw: body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': sign(hook.json.secret, body) } });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.json.deployments.map((d: any) => d.frame_id)).toEqual([main.id]);
    const history = await t.get(`${framePath(main)}/deployments`, { token: ann.token });
    expect(history.json.data[0]).toMatchObject({ trigger: 'push', commit_sha: 'a'.repeat(40) });
    expect((await t.get(`${framePath(other)}/deployments`, { token: ann.token })).json.data).toHaveLength(1);

    const rotated = await t.post(`/v2/projects/${project.id}/webhook`, { token: ann.token });
    expect(rotated.json.secret).not.toBe(hook.json.secret);
    const stale = await t.post(`/v2/hooks/git?project=${project.id}`, { raw: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(hook.json.secret, body) } });
    expectProblem(stale, 401);
    const ping = await t.post(`/v2/hooks/git?project=${project.id}`, { raw: '{"zen":"hi"}', headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-hub-signature-256': sign(rotated.json.secret, '{"zen":"hi"}') } });
    expect(ping.status).toBe(202);
    expect(ping.json.deployments).toEqual([]);
  });

  it('a push clears a back-off trip and restarts the frame, but does not start a frame stopped by hand', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const tripped = await newFrame(t, ann, project.id, space, { name: 't', git_repository_owner: 'o2', git_repository: 'r2', git_repository_branch: 'main' });
    const stopped = await newFrame(t, ann, project.id, space, { name: 's', git_repository_owner: 'o2', git_repository: 'r2', git_repository_branch: 'main' });
    await t.db.updateTable('frames').set({ desired_state: 'stopped', backoff_tripped_at: new Date() }).where('id', '=', tripped.id).execute();
    await t.post(`${framePath(stopped)}/stop`, { token: ann.token });
    const { secret } = (await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token })).json;
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(40), repository: { name: 'r2', owner: { name: 'o2' } } });
    const r = await t.post(`/v2/hooks/git?project=${project.id}`, { raw: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(secret, body) } });
    expect(r.status, r.text).toBe(202);
    expect(r.json.deployments).toHaveLength(2);
    expect((await t.get(framePath(tripped), { token: ann.token })).json).toMatchObject({ desired_state: 'running', status: 'Starting', backoff: { tripped_at: null } });
    expect((await t.get(framePath(stopped), { token: ann.token })).json).toMatchObject({ desired_state: 'stopped', status: 'Stopped' });
  });
});
