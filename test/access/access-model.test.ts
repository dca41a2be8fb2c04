// The effective role the API answers (computed in SQL, src/access/access-dal.ts) agrees with a
// small reference model written here from the spec, on random worlds of users, teams,
// memberships, projects and grants. The model deliberately does not import src/access/roles.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';

type Granted = 'viewer' | 'member' | 'admin';
type Level = 'viewer' | 'member' | 'admin' | 'owner';

interface World {
  users: number;
  teams: { owner: number; members: (Granted | null)[] }[]; // members[u]: role of user u (ignored for the owner)
  projects: { owner: number }[];
  grants: (Granted | null)[][]; // grants[team][project]
}

// Reference model, straight from spec section 3: owner → owner; else the best over the user's
// teams holding a grant of the lower of team role and grant role; none → not found.
const LEVELS: Level[] = ['viewer', 'member', 'admin', 'owner'];
function modelRole(w: World, user: number, project: number): Level | null {
  if (w.projects[project]!.owner === user) return 'owner';
  let best = -1;
  w.teams.forEach((team, ti) => {
    const teamRole: Level | null = team.owner === user ? 'owner' : (team.members[user] ?? null);
    const grant = w.grants[ti]![project] ?? null;
    if (teamRole === null || grant === null) return;
    const via = Math.min(LEVELS.indexOf(teamRole), LEVELS.indexOf(grant));
    if (via > best) best = via;
  });
  return best < 0 ? null : LEVELS[best]!;
}

const MAX_USERS = 4;
const MAX_TEAMS = 3;
const MAX_PROJECTS = 3;
const grantedOrNone = fc.constantFrom<Granted | null>(null, 'viewer', 'member', 'admin');

const worldArb: fc.Arbitrary<World> = fc
  .record({
    users: fc.integer({ min: 1, max: MAX_USERS }),
    nTeams: fc.integer({ min: 0, max: MAX_TEAMS }),
    nProjects: fc.integer({ min: 1, max: MAX_PROJECTS }),
    teamOwners: fc.array(fc.nat(), { minLength: MAX_TEAMS, maxLength: MAX_TEAMS }),
    memberships: fc.array(fc.array(grantedOrNone, { minLength: MAX_USERS, maxLength: MAX_USERS }), {
      minLength: MAX_TEAMS,
      maxLength: MAX_TEAMS,
    }),
    projectOwners: fc.array(fc.nat(), { minLength: MAX_PROJECTS, maxLength: MAX_PROJECTS }),
    grants: fc.array(
      fc.array(grantedOrNone, { minLength: MAX_PROJECTS, maxLength: MAX_PROJECTS }),
      { minLength: MAX_TEAMS, maxLength: MAX_TEAMS },
    ),
  })
  .map((g) => ({
    users: g.users,
    teams: Array.from({ length: g.nTeams }, (_, ti) => ({
      owner: g.teamOwners[ti]! % g.users,
      members: g.memberships[ti]!.slice(0, g.users),
    })),
    projects: Array.from({ length: g.nProjects }, (_, pi) => ({
      owner: g.projectOwners[pi]! % g.users,
    })),
    grants: g.grants.slice(0, g.nTeams).map((row) => row.slice(0, g.nProjects)),
  }));

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

/** Writes the world with fresh users, so that each run sees only its own projects. */
async function build(w: World) {
  const users: TestUser[] = [];
  for (let u = 0; u < w.users; u++) users.push(await newUser(t, `u${u}`));
  const teamIds: string[] = [];
  for (const team of w.teams) {
    const created = await newTeam(t, users[team.owner]!);
    teamIds.push(created.id);
    for (let u = 0; u < w.users; u++) {
      const role = team.members[u] ?? null;
      if (u !== team.owner && role !== null) await addMember(t, created.id, users[u]!, role);
    }
  }
  const projectIds: string[] = [];
  for (const p of w.projects) projectIds.push((await newProject(t, users[p.owner]!)).id);
  for (let ti = 0; ti < w.teams.length; ti++) {
    for (let pi = 0; pi < w.projects.length; pi++) {
      const g = w.grants[ti]![pi] ?? null;
      if (g !== null) await share(t, teamIds[ti]!, projectIds[pi]!, g);
    }
  }
  return { users, projectIds };
}

describe('effective role: SQL agrees with the reference model', () => {
  it('on random worlds, for every user and project, in GET /v2/projects/<id> and GET /v2/projects', async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, async (w) => {
        const { users, projectIds } = await build(w);
        for (let u = 0; u < w.users; u++) {
          const expected = new Map<string, Level>();
          for (let p = 0; p < projectIds.length; p++) {
            const want = modelRole(w, u, p);
            const r = await t.get(`/v2/projects/${projectIds[p]}`, { token: users[u]!.token });
            if (want === null) {
              expect(r.status, `user ${u} project ${p}: ${r.text}`).toBe(404);
            } else {
              expect(r.status, `user ${u} project ${p}: ${r.text}`).toBe(200);
              expect(r.json.role, `user ${u} project ${p}`).toBe(want);
              expected.set(projectIds[p]!, want);
            }
          }
          const list = await t.get('/v2/projects?limit=200', { token: users[u]!.token });
          expect(list.status, list.text).toBe(200);
          const got = list.json.data.map((p: { id: string; role: string }) => [p.id, p.role]);
          expect(got, `list of user ${u}`).toEqual(
            [...expected].sort(([a], [b]) => (a < b ? -1 : 1)),
          );
          expect(list.json.next_cursor).toBeNull();
        }
      }),
      { numRuns: 50 },
    );
  }, 60_000);

  it('the model encodes the spec examples', () => {
    // One team, one project owned by user 0; user 1 in the team with the given role.
    const w = (teamRole: Granted, grant: Granted): World => ({
      users: 2,
      teams: [{ owner: 0, members: [null, teamRole] }],
      projects: [{ owner: 0 }],
      grants: [[grant]],
    });
    expect(modelRole(w('viewer', 'admin'), 1, 0)).toBe('viewer');
    expect(modelRole(w('admin', 'viewer'), 1, 0)).toBe('viewer');
    expect(modelRole(w('member', 'admin'), 1, 0)).toBe('member');
    expect(modelRole(w('member', 'admin'), 0, 0)).toBe('owner');
    expect(
      modelRole({ users: 2, teams: [], projects: [{ owner: 0 }], grants: [] }, 1, 0),
    ).toBeNull();
  });
});
