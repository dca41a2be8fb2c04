// The push webhook's signature paths (CONTRACT 5): X-Hub-Signature-256 is `sha256=` and the
// hex HMAC-SHA256 of the raw body under the project's secret. Missing, malformed, made with
// another secret, made over another body, or made with a secret since rotated: 401
// `invalid_signature`, the same answer each time, and nothing deployed or remembered (so the
// genuine delivery still applies afterwards). The right signature deploys.
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureMatches } from '../../src/webhooks/webhook-service.ts';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, newFrame } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const hmac = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body).digest('hex');
const sign = (secret: string, body: string) => `sha256=${hmac(secret, body)}`;

let n = 0;
/** A push to main of acme/<repo>, different each call (a fresh `after`), so none is a repeat. */
function pushBody(repo: string) {
  n += 1;
  return JSON.stringify({
    ref: 'refs/heads/main',
    after: n.toString(16).padStart(40, 'c'),
    repository: { name: repo, owner: { login: 'acme' } },
  });
}

interface Watched {
  ann: TestUser;
  project: { id: string };
  frame: { id: string };
  repo: string;
  secret: string;
}

async function watched(): Promise<Watched> {
  const ann = await newUser(t, 'ann');
  const project = await newProject(t, ann);
  const space = await defaultSpace(t, ann, project.id);
  const repo = `sig-${++n}`;
  const frame = await newFrame(t, ann, project.id, space, { git_repository: repo });
  const hook = await t.get(`/v2/projects/${project.id}/webhook`, { token: ann.token });
  expect(hook.status, hook.text).toBe(200);
  return { ann, project, frame, repo, secret: hook.json.secret };
}

function deliver(
  w: Watched,
  body: string,
  signature: string | undefined,
  o: { byProject?: boolean } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-event': 'push',
  };
  if (signature !== undefined) headers['x-hub-signature-256'] = signature;
  const path = o.byProject ? `/v2/hooks/git?project=${w.project.id}` : '/v2/hooks/git';
  return t.post(path, { raw: body, headers });
}

const deploymentsOf = async (frameId: string) =>
  (await t.db.selectFrom('deployments').select('id').where('frame_id', '=', frameId).execute())
    .length;
// webhook_deliveries has no row type in src/db/schema.ts: read it with plain SQL.
const deliveriesOf = async (projectId: string) =>
  (
    await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries
      where project_id = ${projectId}`.execute(t.db)
  ).rows[0]!.n;

/** A refused delivery: 401 invalid_signature, no deployment, nothing remembered. */
async function expectRefused(w: Watched, r: Reply) {
  expectProblem(r, 401, 'invalid_signature');
  expect(r.json.detail).toBe(
    'The X-Hub-Signature-256 header does not match this payload and secret.',
  );
  expect(await deploymentsOf(w.frame.id)).toBe(1); // the create deployment only
  expect(await deliveriesOf(w.project.id)).toBe(0);
}

/** The genuine delivery still applies after the refusals: they left no trace. */
async function expectStillApplies(w: Watched, body: string) {
  const r = await deliver(w, body, sign(w.secret, body));
  expect(r.status, r.text).toBe(202);
  expect(r.json.deployments).toEqual([
    { frame_id: w.frame.id, deployment_id: expect.stringMatching(/^dep_/) },
  ]);
  expect(await deploymentsOf(w.frame.id)).toBe(2);
}

describe('signatureMatches (the comparison alone)', () => {
  const body = '{"ref":"refs/heads/main"}';
  it('takes sha256= and the hex HMAC of the exact body, in either case', () => {
    expect(signatureMatches('s3cret', body, sign('s3cret', body))).toBe(true);
    expect(signatureMatches('s3cret', body, `sha256=${hmac('s3cret', body).toUpperCase()}`)).toBe(
      true,
    );
  });
  it('refuses a missing, malformed, foreign or stale signature', () => {
    const good = hmac('s3cret', body);
    for (const header of [
      undefined,
      '',
      good, // no prefix
      `sha1=${good}`,
      `SHA256=${good}`,
      `sha256=${good.slice(0, -1)}`, // one digit short
      `sha256=${good}0`, // one digit long
      `sha256=${good.slice(0, -1)}g`, // not hex
      `sha256= ${good}`,
      `sha256=${hmac('other', body)}`,
      `sha256=${hmac('s3cret', `${body} `)}`,
      `sha256=${Buffer.from(hmac('s3cret', body), 'hex').toString('base64')}`,
    ])
      expect(signatureMatches('s3cret', body, header), String(header)).toBe(false);
  });
});

// Each test has a project of its own, so counts start from the create deployment alone.
describe('POST /v2/hooks/git signature paths', () => {
  it('no X-Hub-Signature-256 header: 401', async () => {
    const w = await watched();
    const body = pushBody(w.repo);
    await expectRefused(w, await deliver(w, body, undefined));
    await expectRefused(w, await deliver(w, body, undefined, { byProject: true }));
    await expectStillApplies(w, body);
  });

  it('a malformed header: 401 whatever its shape', async () => {
    const w = await watched();
    const body = pushBody(w.repo);
    const good = hmac(w.secret, body);
    for (const header of [
      '',
      good,
      `sha1=${createHmac('sha1', w.secret).update(body).digest('hex')}`,
      `sha256=${good.slice(0, 32)}`,
      `sha256=${good}${good}`,
      `sha256=${'z'.repeat(64)}`,
      'sha256=',
    ]) {
      await expectRefused(w, await deliver(w, body, header));
      await expectRefused(w, await deliver(w, body, header, { byProject: true }));
    }
    await expectStillApplies(w, body);
  });

  it('signed with a wrong secret, or with another project’s secret: 401', async () => {
    const w = await watched();
    const other = await watched();
    const body = pushBody(w.repo);
    await expectRefused(w, await deliver(w, body, sign('not-the-secret', body)));
    await expectRefused(w, await deliver(w, body, sign(other.secret, body), { byProject: true }));
    // The other project's own secret does not make it deploy this project's frame either.
    expect(await deploymentsOf(other.frame.id)).toBe(1);
    await expectStillApplies(w, body);
  });

  it('signed over a body that was then altered: 401', async () => {
    const w = await watched();
    const body = pushBody(w.repo);
    const signature = sign(w.secret, body);
    const parsed = JSON.parse(body);
    for (const altered of [
      JSON.stringify({ ...parsed, ref: 'refs/heads/other' }),
      JSON.stringify({ ...parsed, after: 'd'.repeat(40) }),
      JSON.stringify(parsed, null, 2), // the same JSON, other bytes
      `${body}\n`,
    ]) {
      expect(altered).not.toBe(body);
      await expectRefused(w, await deliver(w, altered, signature));
    }
    await expectStillApplies(w, body);
  });

  it('the right secret deploys, through ?project or through the watched repository', async () => {
    const w = await watched();
    const byProject = pushBody(w.repo);
    const r = await deliver(w, byProject, sign(w.secret, byProject), { byProject: true });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toMatchObject({ event: 'push', deployments: [{ frame_id: w.frame.id }] });
    expect(await deploymentsOf(w.frame.id)).toBe(2);
    const byRepo = pushBody(w.repo);
    const r2 = await deliver(w, byRepo, sign(w.secret, byRepo));
    expect(r2.status, r2.text).toBe(202);
    expect(await deploymentsOf(w.frame.id)).toBe(3);
    expect(await deliveriesOf(w.project.id)).toBe(2);
  });

  it('an upper-case hex digest is the same signature', async () => {
    const w = await watched();
    const body = pushBody(w.repo);
    const r = await deliver(w, body, `sha256=${hmac(w.secret, body).toUpperCase()}`);
    expect(r.status, r.text).toBe(202);
    expect(r.json.deployments).toHaveLength(1);
  });
});

describe('a rotated secret', () => {
  it('the old secret is refused at once, the new one applies; a second rotation retires the first new one', async () => {
    const w = await watched();
    const old = w.secret;
    const rotated = await t.post(`/v2/projects/${w.project.id}/webhook`, { token: w.ann.token });
    expect(rotated.status, rotated.text).toBe(200);
    const fresh: string = rotated.json.secret;
    expect(fresh).not.toBe(old);
    expect(
      (await t.get(`/v2/projects/${w.project.id}/webhook`, { token: w.ann.token })).json,
    ).toMatchObject({
      secret: fresh,
      url: `http://frameplane.test/v2/hooks/git?project=${w.project.id}`,
    });

    const body = pushBody(w.repo);
    await expectRefused(w, await deliver(w, body, sign(old, body)));
    await expectRefused(w, await deliver(w, body, sign(old, body), { byProject: true }));
    await expectStillApplies({ ...w, secret: fresh }, body);

    const again = await t.post(`/v2/projects/${w.project.id}/webhook`, { token: w.ann.token });
    expect(again.json.secret).not.toBe(fresh);
    const next = pushBody(w.repo);
    const r = await deliver(w, next, sign(fresh, next));
    expectProblem(r, 401, 'invalid_signature');
    expect(await deploymentsOf(w.frame.id)).toBe(2);
    const ok = await deliver(w, next, sign(again.json.secret, next));
    expect(ok.status, ok.text).toBe(202);
    expect(await deploymentsOf(w.frame.id)).toBe(3);
  });

  it('a rotation is audited and needs an admin of the project', async () => {
    const w = await watched();
    const stranger = await newUser(t, 'stranger');
    expectProblem(
      await t.post(`/v2/projects/${w.project.id}/webhook`, { token: stranger.token }),
      404,
      'project_not_found',
    );
    expect(
      (await t.get(`/v2/projects/${w.project.id}/webhook`, { token: w.ann.token })).json.secret,
    ).toBe(w.secret);
    await t.post(`/v2/projects/${w.project.id}/webhook`, { token: w.ann.token });
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['action', 'actor_id'])
      .where('project_id', '=', w.project.id)
      .where('action', '=', 'webhook.rotated')
      .execute();
    expect(audit).toEqual([{ action: 'webhook.rotated', actor_id: w.ann.id }]);
  });
});
