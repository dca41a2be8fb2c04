// Issue 12, item 9: names a person sets are shown to others (the invitation e-mail, member lists,
// logs), so none may hold a control character: a CR/LF in a team or inviter name made a forged
// paragraph in the text part of the invitation e-mail. Every create and rename route answers 422
// with a message that says what to send; ordinary Unicode names still pass. (NUL is refused
// earlier, by the JSON parser, as 400/422 invalid_character for any field.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import {
  expectProblem,
  newProject,
  newTeam,
  newUser,
  type TestUser,
} from '../helpers/factories.ts';
import { ADMIN, defaultSpace, newFrame } from '../helpers/frames.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
let spaceId: string;
let team: { id: string };
let frame: { id: string };
beforeAll(async () => {
  t = await testApp();
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  spaceId = await defaultSpace(t, ann, project.id);
  team = await newTeam(t, ann);
  frame = await newFrame(t, ann, project.id, spaceId);
});
afterAll(async () => {
  await t.close();
});

const BAD: Array<[string, string]> = [
  ['CR LF', 'Acme\r\n\r\nURGENT: your account is locked, sign in at http://evil.test'],
  ['LF', 'Acme\nSupport'],
  ['CR', 'Acme\rSupport'],
  ['TAB', 'Acme\tSupport'],
  ['ESC (terminal escape)', 'Acme\u001b[31m'],
  ['DEL', 'Acme\u007f'],
  ['NEL (C1)', 'Acme\u0085Support'],
  ['line separator', 'Acme\u2028Support'],
  ['paragraph separator', 'Acme\u2029Support'],
  ['right-to-left override', 'Acme\u202Etxt.exe'],
  ['bidi isolate', 'Acme\u2066x\u2069'],
];
const GOOD = ['Équipe 東京 🚀', "O'Brien & Sons (EU)", 'a'];

interface NameRoute {
  what: string;
  send: (name: string) => Promise<Reply>;
  ok: number;
}
const routes = (): NameRoute[] => [
  {
    what: 'signup: user name',
    ok: 201,
    send: (name) =>
      t.post('/v2/auth/signup', {
        body: {
          email: `n${Math.random().toString(36).slice(2)}@example.test`,
          password: 'long-enough-password',
          name,
        },
      }),
  },
  {
    what: 'create a token',
    ok: 201,
    send: (name) => t.post('/v2/user/tokens', { token: ann.token, body: { name } }),
  },
  {
    what: 'create a team',
    ok: 201,
    send: (name) =>
      t.post('/v2/teams', {
        token: ann.token,
        body: { name, slug: `s-${Math.random().toString(36).slice(2, 10)}` },
      }),
  },
  {
    what: 'rename a team',
    ok: 200,
    send: (name) => t.patch(`/v2/teams/${team.id}`, { token: ann.token, body: { name } }),
  },
  {
    what: 'create a project',
    ok: 201,
    send: (name) => t.post('/v2/projects', { token: ann.token, body: { name } }),
  },
  {
    what: 'rename a project',
    ok: 200,
    send: (name) => t.patch(`/v2/projects/${project.id}`, { token: ann.token, body: { name } }),
  },
  {
    what: 'create a space',
    ok: 201,
    send: (name) =>
      t.post(`/v2/projects/${project.id}/spaces`, { token: ann.token, body: { name } }),
  },
  {
    what: 'rename a space',
    ok: 200,
    send: (name) =>
      t.patch(`/v2/projects/${project.id}/spaces/${spaceId}`, { token: ann.token, body: { name } }),
  },
  {
    what: 'create a frame',
    ok: 201,
    send: (name) =>
      t.post(`/v2/projects/${project.id}/spaces/${spaceId}/frames`, {
        token: ann.token,
        body: {
          name,
          owner_id: ann.id,
          git_repository: 'app',
          git_repository_owner: 'acme',
          git_repository_branch: 'main',
          port: 8080,
        },
      }),
  },
  {
    what: 'rename a frame',
    ok: 200,
    send: (name) =>
      t.patch(`/v2/projects/${project.id}/spaces/${spaceId}/frames/${frame.id}`, {
        token: ann.token,
        body: { name },
      }),
  },
  {
    what: 'register a self-hosted agent',
    ok: 201,
    send: (name) =>
      t.post(`/v2/projects/${project.id}/agents`, { token: ann.token, body: { name } }),
  },
  {
    what: 'register a cloud agent',
    ok: 201,
    send: (name) => t.post('/v2/admin/agents', { token: ADMIN, body: { name } }),
  },
];

describe('names refuse control characters', () => {
  for (const [label, name] of BAD) {
    it(`refuses a name with ${label} on every create and rename route (422, says what to send)`, async () => {
      for (const r of routes()) {
        const res = await r.send(name);
        expectProblem(res, 422, 'validation_failed');
        expect(res.json.errors, r.what).toEqual([
          {
            path: 'name',
            message: expect.stringContaining(
              'without line breaks, tabs or other control characters',
            ),
          },
        ]);
        expect(res.json.detail, r.what).toMatch(/^name: must be one line of plain text/);
        expect(res.json.detail, `${r.what}: no regex in the message`).not.toContain('\\u');
      }
    });
  }

  it('accepts ordinary Unicode names on every route', async () => {
    let n = 0;
    for (const r of routes()) {
      for (const good of GOOD) {
        const name = `${good} ${++n}`; // space names are unique in a project
        const res = await r.send(name);
        expect(res.status, `${r.what} ${name}: ${res.text}`).toBe(r.ok);
      }
    }
  });

  it('nothing was stored with a control character', async () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are the point
    const rx = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    for (const table of [
      'users',
      'teams',
      'projects',
      'spaces',
      'frames',
      'agents',
      'access_tokens',
    ] as const) {
      const names = (await t.db.selectFrom(table).select('name').execute()).map((r) => r.name);
      expect(
        names.filter((n) => rx.test(n)),
        table,
      ).toEqual([]);
    }
  });

  it('an e-mail shows a name stored before the rule on one line, without the forged paragraph', async () => {
    const legacy = await newTeam(t, ann);
    await t.db
      .updateTable('teams')
      .set({ name: 'Acme\r\n\r\nURGENT: sign in at http://evil.test' })
      .where('id', '=', legacy.id)
      .execute();
    await t.db
      .updateTable('users')
      .set({ name: 'Ann\nIT Support' })
      .where('id', '=', ann.id)
      .execute();
    const to = `legacy.${Date.now()}@example.test`;
    const r = await t.post(`/v2/teams/${legacy.id}/invitations`, {
      token: ann.token,
      body: { email: to, role: 'viewer' },
    });
    expect(r.status, r.text).toBe(201);
    const mail = await t.db
      .selectFrom('emails')
      .selectAll()
      .where('to_address', '=', to)
      .executeTakeFirstOrThrow();
    const text = t.core.sealer.open(mail.sealed_text);
    expect(text).toContain('Acme URGENT: sign in at http://evil.test');
    expect(text).toContain('Ann IT Support');
    expect(text.split('\n').some((line) => line.startsWith('URGENT'))).toBe(false);
    expect(mail.subject).not.toMatch(/[\r\n]/);
    await t.db.updateTable('users').set({ name: 'ann' }).where('id', '=', ann.id).execute();
  });
});
