// Roles remembered per (user, project) (src/access/role-memo.ts) are checked against the two
// access versions in the same statement that reads the row, so no change of access is ever
// missed: two instances on one database, each with the role remembered, see a change made
// through the other on their very next request. Random sequences of membership and grant
// changes, read through both instances, always agree with the rule of spec section 3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { testApp, testAppOn, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  // The memo under test is on, even in CI's run with MEMO=off.
  a = await testApp({ env: { MEMO: 'on' } });
  b = await testAppOn(a.url, { env: { MEMO: 'on' } });
  await cloudAgent(a);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** The caller's role as the project read and the frame read each answer it, through one instance. */
async function roleVia(
  t: TestApp,
  user: TestUser,
  projectId: string,
  frame: { project_id: string; space_id: string; id: string },
) {
  const project = await t.get(`/v2/projects/${projectId}`, { token: user.token });
  const frameRead = await t.get(framePath(frame), { token: user.token });
  expect(frameRead.status, frameRead.text).toBe(project.status); // the two reads decide alike
  if (project.status === 404) return null;
  expect(project.status, project.text).toBe(200);
  return project.json.role as string;
}

describe('a remembered role', () => {
  it('is never used after a change of access, on either instance, from the very next request', async () => {
    const ann = await newUser(a, 'ann');
    const bob = await newUser(a, 'bob');
    const project = await newProject(a, ann);
    const frame = await newFrame(a, ann, project.id, await defaultSpace(a, ann, project.id));
    const team = await newTeam(a, ann);
    await addMember(a, team.id, bob, 'member');
    const grant = await a.post(`/v2/teams/${team.id}/grants`, {
      token: ann.token,
      body: { project_id: project.id, role: 'admin' },
    });
    expect(grant.status, grant.text).toBe(201);

    const both = async (expected: string | null) => {
      for (const t of [a, b])
        for (let i = 0; i < 2; i++) expect(await roleVia(t, bob, project.id, frame)).toBe(expected);
    };
    await both('member');
    // Both instances now hold bob's role on the project: what follows runs against a warm memo.
    expect(a.services.access.rememberedRoles()).toBeGreaterThan(0);
    expect(b.services.access.rememberedRoles()).toBeGreaterThan(0);

    const steps: Array<
      [string, TestApp, () => Promise<{ status: number; text: string }>, string | null]
    > = [
      [
        'team role lowered',
        a,
        () =>
          a.patch(`/v2/teams/${team.id}/members/${bob.id}`, {
            token: ann.token,
            body: { role: 'viewer' },
          }),
        'viewer',
      ],
      [
        'team role raised',
        b,
        () =>
          b.patch(`/v2/teams/${team.id}/members/${bob.id}`, {
            token: ann.token,
            body: { role: 'admin' },
          }),
        'admin',
      ],
      [
        'grant lowered',
        a,
        () =>
          a.patch(`/v2/teams/${team.id}/grants/${grant.json.id}`, {
            token: ann.token,
            body: { role: 'member' },
          }),
        'member',
      ],
      [
        'grant removed',
        b,
        () => b.del(`/v2/teams/${team.id}/grants/${grant.json.id}`, { token: ann.token }),
        null,
      ],
      [
        'shared again',
        a,
        () =>
          a.post(`/v2/teams/${team.id}/grants`, {
            token: ann.token,
            body: { project_id: project.id, role: 'viewer' },
          }),
        'viewer',
      ],
      [
        'member removed',
        b,
        () => b.del(`/v2/teams/${team.id}/members/${bob.id}`, { token: ann.token }),
        null,
      ],
      [
        'member added back',
        a,
        async () => {
          await addMember(a, team.id, bob, 'admin');
          return { status: 204, text: '' };
        },
        'viewer',
      ],
      ['team deleted', b, () => b.del(`/v2/teams/${team.id}`, { token: ann.token }), null],
    ];
    for (const [what, via, change, expected] of steps) {
      const r = await change();
      expect(r.status, `${what}: ${r.text}`).toBeLessThan(300);
      // The other instance first, then the one that made the change.
      for (const t of via === a ? [b, a] : [a, b])
        expect(
          await roleVia(t, bob, project.id, frame),
          `${what}, read through ${t === a ? 'a' : 'b'}`,
        ).toBe(expected);
    }
  });

  it('follows a change of project owner (made in the database: no route changes it)', async () => {
    const ann = await newUser(a, 'ann');
    const cy = await newUser(a, 'cy');
    const project = await newProject(a, ann);
    const frame = await newFrame(a, ann, project.id, await defaultSpace(a, ann, project.id));
    for (const t of [a, b]) expect(await roleVia(t, cy, project.id, frame)).toBe(null);
    await a.db
      .updateTable('projects')
      .set({ owner_id: cy.id })
      .where('id', '=', project.id)
      .execute();
    for (const t of [b, a]) {
      expect(await roleVia(t, cy, project.id, frame)).toBe('owner');
      expect(await roleVia(t, ann, project.id, frame)).toBe(null);
    }
  });
});

// The reference rule (spec section 3), written out here: the best over the user's teams holding
// a grant of min(team role, grant role); null when there is none. Nobody here owns the project.
type Granted = 'viewer' | 'member' | 'admin';
const LEVELS = ['viewer', 'member', 'admin', 'owner'];
function model(
  members: (Granted | null)[][],
  grants: (Granted | null)[][],
  user: number,
  project: number,
) {
  let best = -1;
  members.forEach((team, ti) => {
    const m = team[user];
    const g = at(grants, ti)[project];
    if (m && g) best = Math.max(best, Math.min(LEVELS.indexOf(m), LEVELS.indexOf(g)));
  });
  return best < 0 ? null : LEVELS[best];
}

const TEAMS = 2;
const USERS = 2;
const PROJECTS = 2;
const role = fc.constantFrom<Granted | null>(null, 'viewer', 'member', 'admin');
const change = fc.oneof(
  fc.record({
    kind: fc.constant('member' as const),
    team: fc.nat(TEAMS - 1),
    user: fc.nat(USERS - 1),
    role,
  }),
  fc.record({
    kind: fc.constant('grant' as const),
    team: fc.nat(TEAMS - 1),
    project: fc.nat(PROJECTS - 1),
    role,
  }),
);

describe('remembered roles under random changes of access', () => {
  it('agree with the rule after every change, read through either instance', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 8 }), async (changes) => {
        const owner = await newUser(a, 'owner');
        const users = [await newUser(a, 'u0'), await newUser(a, 'u1')];
        const teams = [await newTeam(a, owner), await newTeam(a, owner)];
        const projects = [await newProject(a, owner), await newProject(a, owner)];
        const frames = await Promise.all(
          projects.map(async (p) => newFrame(a, owner, p.id, await defaultSpace(a, owner, p.id))),
        );
        const members: (Granted | null)[][] = teams.map(() => users.map(() => null));
        const grants: (Granted | null)[][] = teams.map(() => projects.map(() => null));
        const check = async (step: number) => {
          for (let u = 0; u < USERS; u++)
            for (let p = 0; p < PROJECTS; p++)
              for (const t of step % 2 ? [a, b] : [b, a]) {
                expect(await roleVia(t, at(users, u), at(projects, p).id, frames[p])).toBe(
                  model(members, grants, u, p),
                );
              }
        };
        await check(0);
        for (const [i, c] of changes.entries()) {
          const team = at(teams, c.team).id;
          if (c.kind === 'member') {
            const user = at(users, c.user);
            const was = at(members, c.team)[c.user];
            if (was && c.role)
              await a.db
                .updateTable('team_members')
                .set({ role: c.role })
                .where('team_id', '=', team)
                .where('user_id', '=', user.id)
                .execute();
            else if (was)
              await a.db
                .deleteFrom('team_members')
                .where('team_id', '=', team)
                .where('user_id', '=', user.id)
                .execute();
            else if (c.role) await addMember(a, team, user, c.role);
            at(members, c.team)[c.user] = c.role;
          } else {
            const project = at(projects, c.project).id;
            const was = at(grants, c.team)[c.project];
            if (was && c.role)
              await a.db
                .updateTable('grants')
                .set({ role: c.role })
                .where('team_id', '=', team)
                .where('project_id', '=', project)
                .execute();
            else if (was)
              await a.db
                .deleteFrom('grants')
                .where('team_id', '=', team)
                .where('project_id', '=', project)
                .execute();
            else if (c.role) await share(a, team, project, c.role);
            at(grants, c.team)[c.project] = c.role;
          }
          await check(i + 1);
        }
      }),
      { numRuns: 15 },
    );
  }, 120_000);
});
