// A frame's settings through HTTP (CONTRACT 5): env vars (sealed, hidden from viewers, pending
// until a deploy), custom domains (one verified frame per hostname in the whole service; the
// verification itself in domains.test.ts) and volumes
// (part of the agent's desired state), with the role rules of CONTRACT 3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';
import { verifiedDomain } from '../helpers/domains.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
let agent: { id: string; token: string };
let owner: TestUser, admin: TestUser, member: TestUser, viewer: TestUser, outsider: TestUser;
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp();
  // One cloud agent: every frame of this file is placed on it.
  agent = await cloudAgent(t, 'cloud-settings');
  [owner, admin, member, viewer, outsider] = await Promise.all([
    newUser(t, 'owner'),
    newUser(t, 'admin'),
    newUser(t, 'member'),
    newUser(t, 'viewer'),
    newUser(t, 'outsider'),
  ]);
  const team = await newTeam(t, owner, 'Settings');
  await addMember(t, team.id, admin, 'admin');
  await addMember(t, team.id, member, 'member');
  await addMember(t, team.id, viewer, 'viewer');
  project = await newProject(t, owner, 'Settings project');
  await share(t, team.id, project.id, 'admin');
  space = await defaultSpace(t, owner, project.id);
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const frame = () => newFrame(t, owner, project.id, space, { name: `web-${++seq}` });
const desiredOf = async (frameId: string) =>
  (await sync(t, agent.token)).frames.find((f) => f.frame_id === frameId)!;

describe('environment variables', () => {
  it('PUT replaces, PATCH merges and null deletes; values are sealed and never in events or audit', async () => {
    const f = await frame();
    const env = `${framePath(f)}/env`;
    expect((await t.get(env, { token: member.token })).json).toEqual({
      vars: {},
      values_visible: true,
    });

    let r = await t.put(env, {
      token: member.token,
      body: {
        vars: { DATABASE_URL: 'postgres://u:hunter2-secret@db/app', A: '1', constructor: 'x' },
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      vars: { A: '1', DATABASE_URL: 'postgres://u:hunter2-secret@db/app', constructor: 'x' },
      values_visible: true,
    });

    r = await t.patch(env, {
      token: member.token,
      body: { vars: { A: null, B: 'two', NOT_THERE: null, constructor: null } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.vars).toEqual({ B: 'two', DATABASE_URL: 'postgres://u:hunter2-secret@db/app' });
    expect((await t.get(env, { token: admin.token })).json).toEqual(r.json);

    // PUT is the whole set: keys left out go.
    r = await t.put(env, {
      token: owner.token,
      body: { vars: { DATABASE_URL: 'postgres://u:hunter2-secret@db/app', C: '' } },
    });
    expect(r.json.vars).toEqual({ C: '', DATABASE_URL: 'postgres://u:hunter2-secret@db/app' });

    const rows = await t.db
      .selectFrom('frame_env')
      .selectAll()
      .where('frame_id', '=', f.id)
      .orderBy('key')
      .execute();
    expect(rows.map((x) => x.key)).toEqual(['C', 'DATABASE_URL']);
    for (const row of rows) {
      expect(row.value_sealed).toMatch(/^v1\./);
      expect(row.value_sealed).not.toContain('hunter2');
      expect(Buffer.from(row.value_sealed.slice(3), 'base64url').toString('latin1')).not.toContain(
        'hunter2',
      );
    }

    const events = await t.db
      .selectFrom('frame_events')
      .select(['type', 'detail', 'actor_id'])
      .where('frame_id', '=', f.id)
      .where('type', '=', 'env_changed')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.detail)).toEqual([
      { set: ['A', 'DATABASE_URL', 'constructor'], deleted: [] },
      { set: ['B'], deleted: ['A', 'constructor'] },
      { set: ['C'], deleted: ['B'] },
    ]);
    expect(at(events, 0).actor_id).toBe(member.id);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('target_id', '=', f.id)
      .where('action', '=', 'frame.env_changed')
      .execute();
    expect(audit).toHaveLength(3);
    expect(audit.every((a) => a.project_id === project.id)).toBe(true);
    expect(JSON.stringify([events, audit])).not.toContain('hunter2');
  });

  it('viewers see the names with null values', async () => {
    const f = await frame();
    await t.put(`${framePath(f)}/env`, {
      token: member.token,
      body: { vars: { SECRET: 's3cr3t', PLAIN: 'p' } },
    });
    const r = await t.get(`${framePath(f)}/env`, { token: viewer.token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ vars: { PLAIN: null, SECRET: null }, values_visible: false });
    expect(r.text).not.toContain('s3cr3t');
  });

  it('an edit is pending until a deploy, creates no deployment, and the agent gets the env only with the deploy', async () => {
    const f = await frame();
    const path = framePath(f);
    let read = (await t.get(path, { token: owner.token })).json;
    expect(read.pending_changes).toEqual([]);
    const { generation, version } = read;

    await t.patch(`${path}/env`, {
      token: member.token,
      body: { vars: { GREETING: 'hello', LANG: 'C.UTF-8' } },
    });
    read = (await t.get(path, { token: owner.token })).json;
    expect(read.pending_changes).toEqual(['env']);
    expect(read.generation).toBe(generation); // nothing new for the agent to run
    expect(read.version).toBe(version + 1);
    expect((await t.get(`${path}/deployments`, { token: owner.token })).json.data).toHaveLength(1);
    expect((await desiredOf(f.id)).env).toEqual({});

    const deploy = await t.post(`${path}/deploy`, { token: member.token });
    expect(deploy.status, deploy.text).toBe(202);
    expect((await t.get(path, { token: owner.token })).json.pending_changes).toEqual([]);
    expect(await desiredOf(f.id)).toMatchObject({
      deployment_id: deploy.json.id,
      env: { GREETING: 'hello', LANG: 'C.UTF-8' },
    });

    // Back to the deployed set, in another order of edits: nothing is pending any more.
    await t.patch(`${path}/env`, { token: member.token, body: { vars: { LANG: null } } });
    expect((await t.get(path, { token: owner.token })).json.pending_changes).toEqual(['env']);
    await t.patch(`${path}/env`, { token: member.token, body: { vars: { LANG: 'C.UTF-8' } } });
    expect((await t.get(path, { token: owner.token })).json.pending_changes).toEqual([]);
    expect((await desiredOf(f.id)).env).toEqual({ GREETING: 'hello', LANG: 'C.UTF-8' });
  });

  it('an edit that changes nothing writes nothing', async () => {
    const f = await frame();
    await t.put(`${framePath(f)}/env`, { token: member.token, body: { vars: { A: '1' } } });
    const before = (await t.get(framePath(f), { token: owner.token })).json.version;
    const r = await t.patch(`${framePath(f)}/env`, {
      token: member.token,
      body: { vars: { A: '1', GONE: null } },
    });
    expect(r.json).toEqual({ vars: { A: '1' }, values_visible: true });
    expect((await t.get(framePath(f), { token: owner.token })).json.version).toBe(before);
  });

  it('refuses bad names, values and sizes', async () => {
    const f = await frame();
    const env = `${framePath(f)}/env`;
    const bad: Array<[string, 'put' | 'patch', unknown]> = [
      ['empty PATCH', 'patch', { vars: {} }],
      ['no vars', 'put', {}],
      ['unknown field', 'put', { vars: {}, extra: 1 }],
      ['key starting with a digit', 'put', { vars: { '1A': 'x' } }],
      ['key with a dash', 'patch', { vars: { 'A-B': 'x' } }],
      ['key with a space', 'patch', { vars: { 'A B': 'x' } }],
      ['empty key', 'patch', { vars: { '': 'x' } }],
      ['key of 256 characters', 'patch', { vars: { ['K'.repeat(256)]: 'x' } }],
      ['number value', 'patch', { vars: { A: 1 } }],
      ['null value in PUT', 'put', { vars: { A: null } }],
      ['object value', 'put', { vars: { A: { b: 'c' } } }],
      ['value over 32 KiB', 'put', { vars: { A: 'x'.repeat(32 * 1024 + 1) } }],
      [
        '501 vars',
        'put',
        { vars: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`K${i}`, 'v'])) },
      ],
    ];
    for (const [what, method, body] of bad) {
      const r = await t[method](env, { token: member.token, body });
      expect(r.status, `${what}: ${r.text}`).toBe(422);
    }
    // 32 KiB counts bytes: 16 Ki two-byte characters fit, one more does not.
    expect(
      (await t.put(env, { token: member.token, body: { vars: { A: 'é'.repeat(16 * 1024) } } }))
        .status,
    ).toBe(200);
    expectProblem(
      await t.put(env, { token: member.token, body: { vars: { A: 'é'.repeat(16 * 1024 + 1) } } }),
      422,
      'env_value_too_large',
    );
    // The limit of 500 holds for the merged set too.
    const k255 = 'K'.repeat(255);
    const full = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [i === 0 ? k255 : `K${i}`, 'v']),
    );
    expect((await t.put(env, { token: member.token, body: { vars: full } })).status).toBe(200);
    const over = await t.patch(env, { token: member.token, body: { vars: { ONE_MORE: 'v' } } });
    expectProblem(over, 422, 'too_many_env_vars');
    expect(over.json.errors[0].path).toBe('vars');
    expect(
      (await t.patch(env, { token: member.token, body: { vars: { ONE_MORE: 'v', K1: null } } }))
        .status,
    ).toBe(200);
    expect(Object.keys((await t.get(env, { token: viewer.token })).json.vars)).toHaveLength(500);
  });

  it('refuses PORT and FRAMEPLANE_* (the runtime sets them) with a message that points to the port setting', async () => {
    const f = await frame();
    const env = `${framePath(f)}/env`;
    const put = await t.put(env, { token: member.token, body: { vars: { A: '1', PORT: '3000' } } });
    expectProblem(put, 422, 'reserved_env_var');
    expect(put.json.errors).toEqual([
      { path: 'vars.PORT', message: expect.stringContaining('`port` setting') },
    ]);
    expect(put.json.detail).toContain('`port`');
    const patch = await t.patch(env, { token: member.token, body: { vars: { PORT: '8080' } } });
    expectProblem(patch, 422, 'reserved_env_var');
    for (const key of [
      'FRAMEPLANE_FRAME_ID',
      'FRAMEPLANE_DEPLOYMENT_ID',
      'FRAMEPLANE_REPLICA',
      'FRAMEPLANE_VOLUME_DATA',
      'FRAMEPLANE_ANYTHING',
    ]) {
      const r = await t.patch(env, { token: member.token, body: { vars: { [key]: 'x' } } });
      expectProblem(r, 422, 'reserved_env_var');
      expect(r.json.errors[0]).toMatchObject({
        path: `vars.${key}`,
        message: expect.stringContaining('reserved'),
      });
    }
    // Nothing was written; names that merely resemble them are fine.
    expect((await t.get(env, { token: member.token })).json.vars).toEqual({});
    const ok = await t.put(env, {
      token: member.token,
      body: { vars: { APP_PORT: '1', port: '2', FRAMEPLANE: '3', MY_FRAMEPLANE_X: '4' } },
    });
    expect(ok.status, ok.text).toBe(200);
    // A PORT saved before this rule can still be deleted (null), and other keys edited beside it.
    await t.db
      .insertInto('frame_env')
      .values({ frame_id: f.id, key: 'PORT', value_sealed: t.core.sealer.seal('1') })
      .execute();
    expect(
      (await t.patch(env, { token: member.token, body: { vars: { APP_PORT: '5' } } })).status,
    ).toBe(200);
    const del = await t.patch(env, { token: member.token, body: { vars: { PORT: null } } });
    expect(del.status, del.text).toBe(200);
    expect(del.json.vars).not.toHaveProperty('PORT');
  });
});

describe('domains', () => {
  const post = (
    f: { project_id: string; space_id: string; id: string },
    hostname: unknown,
    token = admin.token,
  ) => t.post(`${framePath(f)}/domains`, { token, body: { hostname } });

  it('accepts DNS names, stored trimmed, lower-cased and without the trailing dot', async () => {
    const f = await frame();
    const good: Array<[string, string]> = [
      ['app.example.com', 'app.example.com'],
      ['  WWW.Example.ORG.  ', 'www.example.org'],
      ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
      ['a-b.c-d.io', 'a-b.c-d.io'],
      ['1password.example', '1password.example'],
      ['x.y', 'x.y'],
      ['a.b.c.d.e.f.example.net', 'a.b.c.d.e.f.example.net'],
      [`${'a'.repeat(63)}.example.com`, `${'a'.repeat(63)}.example.com`],
      // 231 characters (3 labels of 63, one of 39): with _frameplane-challenge. in front, 253.
      [
        `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(39)}`,
        `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(39)}`,
      ],
    ];
    for (const [input, stored] of good) {
      const r = await post(f, input);
      expect(r.status, `${input}: ${r.text}`).toBe(201);
      expect(r.json).toEqual({
        id: expect.stringMatching(/^dom_/),
        frame_id: f.id,
        hostname: stored,
        target: f.hostname,
        created_at: expect.any(String),
        verified: false,
        verified_at: null,
        verification: {
          type: 'TXT',
          name: `_frameplane-challenge.${stored}`,
          value: expect.stringMatching(/^frameplane-verify=[0-9a-f]{32}$/),
        },
      });
    }
    const list = await t.get(`${framePath(f)}/domains`, { token: viewer.token });
    expect(list.status).toBe(200);
    expect(list.json.data.map((d: any) => d.hostname)).toEqual(good.map(([, s]) => s));
    expect(list.json.next_cursor).toBeNull();
    // Pages of one, in creation order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.get(
        `${framePath(f)}/domains?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        { token: viewer.token },
      );
      seen.push(...page.json.data.map((d: any) => d.hostname));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(good.map(([, s]) => s));
  });

  it('refuses what is not a usable DNS name (422 invalid_hostname)', async () => {
    const f = await frame();
    const bad = [
      'localhost',
      'example',
      '   ',
      '.',
      '-a.example.com',
      'a-.example.com',
      'a_b.example.com',
      'a..example.com',
      '.example.com',
      'example.123',
      '1.2.3.4',
      '10.0.0.1.',
      '::1',
      '[::1]',
      '2001:db8::1',
      '*.example.com',
      'http://example.com',
      'example.com/path',
      'example.com:8080',
      'user@example.com',
      'exa mple.com',
      `${'a'.repeat(64)}.example.com`,
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`,
      // A valid DNS name of 253 characters, but its challenge record would not be one.
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
    ];
    for (const hostname of bad) {
      const r = await post(f, hostname);
      expect(r.status, `${hostname}: ${r.text}`).toBe(422);
      expect(r.json.code, hostname).toBe('invalid_hostname');
      expect(r.json.errors, hostname).toEqual([{ path: 'hostname', message: expect.any(String) }]);
    }
    const unicode = await post(f, 'bücher.de');
    expectProblem(unicode, 422, 'invalid_hostname');
    // The request schema's pattern refuses it: the message says to write punycode (xn--…).
    expect(unicode.json.detail).toContain('punycode');
    // Not a string, empty, unknown fields: the body schema.
    for (const body of [
      { hostname: 42 },
      { hostname: '' },
      {},
      { hostname: 'ok.example.com', frame_id: f.id },
    ]) {
      expect((await t.post(`${framePath(f)}/domains`, { token: admin.token, body })).status).toBe(
        422,
      );
    }
    expect((await t.get(`${framePath(f)}/domains`, { token: admin.token })).json.data).toEqual([]);
  });

  it('a verified hostname belongs to one frame in the whole service, whatever its case', async () => {
    const [a, b] = [await frame(), await frame()];
    await verifiedDomain(t, admin.token, a, 'shop.example.com');
    expectProblem(await post(a, 'shop.example.com'), 409, 'domain_taken');
    expectProblem(await post(b, 'SHOP.Example.com.'), 409, 'domain_taken');
    // Another project of another owner cannot take it either.
    const other = await newUser(t, 'other');
    const p2 = await newProject(t, other, 'Other');
    const f2 = await newFrame(t, other, p2.id, await defaultSpace(t, other, p2.id));
    expectProblem(await post(f2, 'shop.example.com', other.token), 409, 'domain_taken');
  });

  it('ten concurrent claims of one hostname by ten frames are all pending (verify races: domains.test.ts)', async () => {
    const frames = [];
    for (let i = 0; i < 10; i++) frames.push(await frame());
    const answers = await Promise.all(frames.map((f) => post(f, 'race.example.com')));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    const rows = await t.db
      .selectFrom('domains')
      .selectAll()
      .where('hostname', '=', 'race.example.com')
      .execute();
    expect(rows.map((r) => r.frame_id).sort()).toEqual(frames.map((f) => f.id).sort());
    expect(rows.every((r) => r.verified_at === null)).toBe(true);
  });

  it('DELETE releases the hostname; deleting the frame releases its domains', async () => {
    const [a, b] = [await frame(), await frame()];
    const d = await verifiedDomain(t, admin.token, a, 'move.example.com');
    expectProblem(await post(b, 'move.example.com'), 409, 'domain_taken');
    expectProblem(
      await t.del(`${framePath(b)}/domains/${d.id}`, { token: admin.token }),
      404,
      'domain_not_found',
    );
    const del = await t.del(`${framePath(a)}/domains/${d.id}`, { token: admin.token });
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expectProblem(
      await t.del(`${framePath(a)}/domains/${d.id}`, { token: admin.token }),
      404,
      'domain_not_found',
    );
    await verifiedDomain(t, admin.token, b, 'move.example.com');

    const kept = await verifiedDomain(t, admin.token, b, 'kept.example.com');
    expectProblem(await post(a, 'kept.example.com'), 409, 'domain_taken');
    const gone = await t.del(framePath(b), { token: admin.token });
    expect(gone.status, gone.text).toBe(200);
    expect(gone.json.released.domains.map((x: any) => x.hostname).sort()).toEqual([
      'kept.example.com',
      'move.example.com',
    ]);
    expect(gone.json.released.domains.map((x: any) => x.id)).toContain(kept.id);
    expect((await post(a, 'kept.example.com')).status).toBe(201);

    const types = (
      await t.db.selectFrom('frame_events').select('type').where('frame_id', '=', a.id).execute()
    ).map((e) => e.type);
    expect(types.filter((x) => x.startsWith('domain_'))).toEqual([
      'domain_added',
      'domain_verified',
      'domain_removed',
      'domain_added',
    ]);
    const audit = await t.db
      .selectFrom('audit_events')
      .select('action')
      .where('project_id', '=', project.id)
      .where('target_id', '=', d.id)
      .orderBy('id')
      .execute();
    expect(audit.map((x) => x.action)).toEqual([
      'frame.domain_added',
      'frame.domain_verified',
      'frame.domain_removed',
    ]);
  });
});

describe('volumes', () => {
  const post = (
    f: { project_id: string; space_id: string; id: string },
    body: unknown,
    token = admin.token,
  ) => t.post(`${framePath(f)}/volumes`, { token, body });

  it('are added and removed as part of what the agent runs', async () => {
    const f = await frame();
    const gen0 = (await desiredOf(f.id)).generation;
    // A waiting sync wakes up when a volume is added.
    const waiting = t.post('/v2/agent/sync?wait=20', { token: agent.token, body: {} });
    await t.untilHolding('frameplane_agent', agent.id, 'the long poll');
    const started = Date.now();
    const r = await post(f, { name: 'data', mount_path: '/var/lib/data', size_gb: 10 });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^vol_/),
      frame_id: f.id,
      name: 'data',
      mount_path: '/var/lib/data',
      size_gb: 10,
      created_at: expect.any(String),
    });
    const woke = await waiting;
    // Half the wait: woken by the change, not by the timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(woke.json.frames.find((x: any) => x.frame_id === f.id).volumes).toEqual([
      { id: r.json.id, name: 'data', mount_path: '/var/lib/data', size_gb: 10 },
    ]);

    const second = (await post(f, { name: 'cache', mount_path: '/cache', size_gb: 1 })).json;
    let desired = await desiredOf(f.id);
    expect(desired.generation).toBe(gen0 + 2);
    expect(desired.volumes.map((v: any) => v.name)).toEqual(['data', 'cache']);
    const list = await t.get(`${framePath(f)}/volumes`, { token: viewer.token });
    expect(list.json.data.map((v: any) => v.id)).toEqual([r.json.id, second.id]);

    expect(
      (await t.del(`${framePath(f)}/volumes/${r.json.id}`, { token: admin.token })).status,
    ).toBe(204);
    expectProblem(
      await t.del(`${framePath(f)}/volumes/${r.json.id}`, { token: admin.token }),
      404,
      'volume_not_found',
    );
    desired = await desiredOf(f.id);
    expect(desired.generation).toBe(gen0 + 3);
    expect(desired.volumes).toEqual([
      { id: second.id, name: 'cache', mount_path: '/cache', size_gb: 1 },
    ]);
    // No deployment: the volumes apply to what already runs.
    expect(
      (await t.get(`${framePath(f)}/deployments`, { token: owner.token })).json.data,
    ).toHaveLength(1);
    const types = (
      await t.db.selectFrom('frame_events').select('type').where('frame_id', '=', f.id).execute()
    ).map((e) => e.type);
    expect(types.filter((x) => x.startsWith('volume_'))).toEqual([
      'volume_added',
      'volume_added',
      'volume_removed',
    ]);
    const gone = await t.del(framePath(f), { token: owner.token });
    expect(gone.json.released.volumes).toEqual([
      { id: second.id, name: 'cache', mount_path: '/cache', size_gb: 1 },
    ]);
  });

  it('names and mount paths are unique per frame', async () => {
    const [a, b] = [await frame(), await frame()];
    expect((await post(a, { name: 'data', mount_path: '/data', size_gb: 5 })).status).toBe(201);
    expectProblem(
      await post(a, { name: 'data', mount_path: '/other', size_gb: 5 }),
      409,
      'volume_name_taken',
    );
    expectProblem(
      await post(a, { name: 'other', mount_path: '/data', size_gb: 5 }),
      409,
      'mount_path_taken',
    );
    expect((await post(b, { name: 'data', mount_path: '/data', size_gb: 5 })).status).toBe(201);
  });

  it('refuses bad names, mount paths and sizes', async () => {
    const f = await frame();
    const ok = { name: 'v', mount_path: '/data', size_gb: 1 };
    const badBodies: Array<[string, Record<string, unknown>]> = [
      ['upper-case name', { name: 'Data' }],
      ['name with underscore', { name: 'my_data' }],
      ['name ending with -', { name: 'data-' }],
      ['name starting with -', { name: '-data' }],
      ['empty name', { name: '' }],
      ['64-character name', { name: 'a'.repeat(64) }],
      ['size 0', { size_gb: 0 }],
      ['size 16385', { size_gb: 16385 }],
      ['fractional size', { size_gb: 1.5 }],
      ['size as text', { size_gb: '10' }],
      ['unknown field', { read_only: true }],
    ];
    for (const [what, patch] of badBodies) {
      const r = await post(f, { ...ok, ...patch });
      expect(r.status, `${what}: ${r.text}`).toBe(422);
    }
    const badPaths = [
      'data',
      './data',
      '/',
      '//data',
      '/data//x',
      '/data/',
      '/data/../etc',
      '/data/./x',
      '/..',
      '/proc',
      '/proc/x',
      '/sys',
      '/dev/shm',
      '/etc',
      '/etc/nginx',
      '/bin',
      '/usr/local/data',
      '/lib',
      '/sbin',
      '/boot',
      '/run',
      '/run/x',
      '/var/run',
      '/var/run/app',
      '/data x',
      `/${'a'.repeat(255)}`,
    ];
    for (const mount_path of badPaths) {
      const r = await post(f, { ...ok, mount_path });
      expect(r.status, `${mount_path}: ${r.text}`).toBe(422);
      if (mount_path.length <= 255) {
        expect(r.json.code, mount_path).toBe('invalid_mount_path');
        expect(r.json.errors, mount_path).toEqual([
          { path: 'mount_path', message: expect.any(String) },
        ]);
      }
    }
    let n = 0;
    for (const mount_path of [
      '/data',
      '/var/lib/postgres',
      '/home/app/.cache',
      '/srv/run',
      '/etcetera',
      '/usrdata',
      '/var/runner',
      `/${'a'.repeat(254)}`,
    ]) {
      const r = await post(f, { name: `v${++n}`, mount_path, size_gb: n === 1 ? 16384 : 1 });
      expect(r.status, `${mount_path}: ${r.text}`).toBe(201);
    }
  });
});

describe('who may do what', () => {
  it('viewers read, members edit env, admins manage domains and volumes, outsiders see nothing', async () => {
    const f = await frame();
    const p = framePath(f);
    const d = (
      await t.post(`${p}/domains`, { token: owner.token, body: { hostname: 'roles.example.com' } })
    ).json;
    const v = (
      await t.post(`${p}/volumes`, {
        token: owner.token,
        body: { name: 'data', mount_path: '/data', size_gb: 1 },
      })
    ).json;
    const calls: Array<[string, (tok?: string) => ReturnType<TestApp['get']>]> = [
      ['GET env', (tok) => t.get(`${p}/env`, { token: tok })],
      ['PUT env', (tok) => t.put(`${p}/env`, { token: tok, body: { vars: { A: '1' } } })],
      ['PATCH env', (tok) => t.patch(`${p}/env`, { token: tok, body: { vars: { B: '2' } } })],
      ['GET domains', (tok) => t.get(`${p}/domains`, { token: tok })],
      [
        'POST domains',
        (tok) =>
          t.post(`${p}/domains`, { token: tok, body: { hostname: `r-${++seq}.example.com` } }),
      ],
      ['DELETE domain', (tok) => t.del(`${p}/domains/${d.id}`, { token: tok })],
      ['POST domain verify', (tok) => t.post(`${p}/domains/${d.id}/verify`, { token: tok })],
      ['GET volumes', (tok) => t.get(`${p}/volumes`, { token: tok })],
      [
        'POST volumes',
        (tok) =>
          t.post(`${p}/volumes`, {
            token: tok,
            body: { name: `v${++seq}`, mount_path: `/v${seq}`, size_gb: 1 },
          }),
      ],
      ['DELETE volume', (tok) => t.del(`${p}/volumes/${v.id}`, { token: tok })],
    ];
    const expected: Record<string, number[]> = {
      // viewer, member, outsider, anonymous
      'GET env': [200, 200, 404, 401],
      'PUT env': [403, 200, 404, 401],
      'PATCH env': [403, 200, 404, 401],
      'GET domains': [200, 200, 404, 401],
      'POST domains': [403, 403, 404, 401],
      'DELETE domain': [403, 403, 404, 401],
      'POST domain verify': [403, 403, 404, 401],
      'GET volumes': [200, 200, 404, 401],
      'POST volumes': [403, 403, 404, 401],
      'DELETE volume': [403, 403, 404, 401],
    };
    for (const [name, call] of calls) {
      const got = [];
      for (const who of [viewer.token, member.token, outsider.token, undefined])
        got.push((await call(who)).status);
      expect(got, name).toEqual(expected[name]);
    }
    // Admins (through the team grant) manage domains and volumes.
    expect(
      (
        await t.post(`${p}/domains`, {
          token: admin.token,
          body: { hostname: 'admin.example.com' },
        })
      ).status,
    ).toBe(201);
    expect((await t.post(`${p}/domains/${d.id}/verify`, { token: admin.token })).status).toBe(422); // no TXT record
    expect((await t.del(`${p}/domains/${d.id}`, { token: admin.token })).status).toBe(204);
    expect((await t.del(`${p}/volumes/${v.id}`, { token: admin.token })).status).toBe(204);
  });

  it('a frame is reached only through its own project and space', async () => {
    const f = await frame();
    const other = await newProject(t, owner, 'Elsewhere');
    const otherSpace = await defaultSpace(t, owner, other.id);
    const wrong = [
      `/v2/projects/${other.id}/spaces/${otherSpace}/frames/${f.id}`,
      `/v2/projects/${project.id}/spaces/${otherSpace}/frames/${f.id}`,
      `/v2/projects/${project.id}/spaces/${space}/frames/frm_00000000000000000000000000`,
      `/v2/projects/${project.id}/spaces/${space}/frames/not-an-id`,
    ];
    for (const p of wrong) {
      expect((await t.get(`${p}/env`, { token: owner.token })).status, p).toBe(404);
      expect((await t.put(`${p}/env`, { token: owner.token, body: { vars: {} } })).status, p).toBe(
        404,
      );
      expect(
        (
          await t.post(`${p}/domains`, {
            token: owner.token,
            body: { hostname: 'nowhere.example.com' },
          })
        ).status,
        p,
      ).toBe(404);
      expect(
        (
          await t.post(`${p}/volumes`, {
            token: owner.token,
            body: { name: 'x', mount_path: '/x', size_gb: 1 },
          })
        ).status,
        p,
      ).toBe(404);
    }
    expect((await t.get(`${framePath(f)}/domains`, { token: owner.token })).json.data).toEqual([]);
  });
});
