// The effective role the API answers (computed in SQL, src/access/access-dal.ts) and the pure
// rule (src/access/roles.ts) both agree with a small reference model written here from the spec
// and CONTRACT 3a, on random worlds of users, teams, organizations (memberships and base_role),
// projects owned by a user or an org, and grants. The model deliberately does not use roles.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { effectiveProjectRole, type Role, type Share } from '../../src/access/roles.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { addOrgMember, newOrg, newOrgProject } from '../helpers/orgs.ts';
import {
  addMember,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';

type Granted = 'viewer' | 'member' | 'admin';
type Level = 'viewer' | 'member' | 'admin' | 'owner';
type OrgRole = 'admin' | 'member';
type Base = 'none' | 'viewer' | 'member' | 'admin';

interface World {
  users: number;
  teams: { owner: number; members: (Granted | null)[] }[]; // members[u]: role of user u (ignored for the owner)
  orgs: { owner: number; baseRole: Base; members: (OrgRole | null)[] }[]; // likewise
  projects: { owner: number; org: number | null }[]; // org: the owning org, else user `owner` owns it
  grants: (Granted | null)[][]; // grants[team][project]
}

/** The user's role in the org, or null. */
function orgRoleOf(w: World, org: number, user: number): 'owner' | OrgRole | null {
  const o = at(w.orgs, org);
  return o.owner === user ? 'owner' : at(o.members, user);
}

// Reference model, straight from spec section 3 and CONTRACT 3a: the user owner → owner; else
// the best of the org path (org owner → owner, org admin → admin, org member → base_role,
// none giving nothing) and, over the user's teams holding a grant, the lower of team role and
// grant role; nothing → not found.
const LEVELS: Level[] = ['viewer', 'member', 'admin', 'owner'];
function modelRole(w: World, user: number, project: number): Level | null {
  const p = at(w.projects, project);
  if (p.org === null && p.owner === user) return 'owner';
  let best = -1;
  if (p.org !== null) {
    const orgRole = orgRoleOf(w, p.org, user);
    const base = at(w.orgs, p.org).baseRole;
    const viaOrg: Level | null = orgRole === 'member' ? (base === 'none' ? null : base) : orgRole;
    if (viaOrg !== null) best = LEVELS.indexOf(viaOrg);
  }
  w.teams.forEach((team, ti) => {
    const teamRole: Level | null = team.owner === user ? 'owner' : at(team.members, user);
    const grant = at(at(w.grants, ti), project);
    if (teamRole === null || grant === null) return;
    const via = Math.min(LEVELS.indexOf(teamRole), LEVELS.indexOf(grant));
    if (via > best) best = via;
  });
  return best < 0 ? null : at(LEVELS, best);
}

/** The pure rule of roles.ts, given the same facts as the model. */
function pureRole(w: World, user: number, project: number): Role | null {
  const p = at(w.projects, project);
  const shares: Share[] = [];
  w.teams.forEach((team, ti) => {
    const teamRole = team.owner === user ? 'owner' : at(team.members, user);
    const grantRole = at(at(w.grants, ti), project);
    if (teamRole !== null && grantRole !== null) shares.push({ teamRole, grantRole });
  });
  const orgRole = p.org === null ? null : orgRoleOf(w, p.org, user);
  const org =
    p.org === null || orgRole === null ? null : { orgRole, baseRole: at(w.orgs, p.org).baseRole };
  return effectiveProjectRole(p.org === null && p.owner === user, shares, org);
}

const MAX_USERS = 4;
const MAX_TEAMS = 3;
const MAX_ORGS = 2;
const MAX_PROJECTS = 4;
const grantedOrNone = fc.constantFrom<Granted | null>(null, 'viewer', 'member', 'admin');
const orgRoleOrNone = fc.constantFrom<OrgRole | null>(null, 'admin', 'member');

const worldArb: fc.Arbitrary<World> = fc
  .record({
    users: fc.integer({ min: 1, max: MAX_USERS }),
    nTeams: fc.integer({ min: 0, max: MAX_TEAMS }),
    nOrgs: fc.integer({ min: 0, max: MAX_ORGS }),
    nProjects: fc.integer({ min: 1, max: MAX_PROJECTS }),
    teamOwners: fc.array(fc.nat(), { minLength: MAX_TEAMS, maxLength: MAX_TEAMS }),
    memberships: fc.array(fc.array(grantedOrNone, { minLength: MAX_USERS, maxLength: MAX_USERS }), {
      minLength: MAX_TEAMS,
      maxLength: MAX_TEAMS,
    }),
    orgOwners: fc.array(fc.nat(), { minLength: MAX_ORGS, maxLength: MAX_ORGS }),
    baseRoles: fc.array(fc.constantFrom<Base>('none', 'viewer', 'member', 'admin'), {
      minLength: MAX_ORGS,
      maxLength: MAX_ORGS,
    }),
    orgMemberships: fc.array(
      fc.array(orgRoleOrNone, { minLength: MAX_USERS, maxLength: MAX_USERS }),
      { minLength: MAX_ORGS, maxLength: MAX_ORGS },
    ),
    projectOwners: fc.array(fc.nat(), { minLength: MAX_PROJECTS, maxLength: MAX_PROJECTS }),
    // Which org owns each project, if any: n % (nOrgs + 1), nOrgs meaning a user owns it.
    projectOrgs: fc.array(fc.nat(), { minLength: MAX_PROJECTS, maxLength: MAX_PROJECTS }),
    grants: fc.array(
      fc.array(grantedOrNone, { minLength: MAX_PROJECTS, maxLength: MAX_PROJECTS }),
      { minLength: MAX_TEAMS, maxLength: MAX_TEAMS },
    ),
  })
  .map((g) => ({
    users: g.users,
    teams: Array.from({ length: g.nTeams }, (_, ti) => ({
      owner: at(g.teamOwners, ti) % g.users,
      members: at(g.memberships, ti).slice(0, g.users),
    })),
    orgs: Array.from({ length: g.nOrgs }, (_, oi) => ({
      owner: at(g.orgOwners, oi) % g.users,
      baseRole: at(g.baseRoles, oi),
      members: at(g.orgMemberships, oi).slice(0, g.users),
    })),
    projects: Array.from({ length: g.nProjects }, (_, pi) => {
      const org = at(g.projectOrgs, pi) % (g.nOrgs + 1);
      return { owner: at(g.projectOwners, pi) % g.users, org: org === g.nOrgs ? null : org };
    }),
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
    const created = await newTeam(t, at(users, team.owner));
    teamIds.push(created.id);
    for (let u = 0; u < w.users; u++) {
      const role = at(team.members, u);
      if (u !== team.owner && role !== null) await addMember(t, created.id, at(users, u), role);
    }
  }
  const orgIds: string[] = [];
  for (const o of w.orgs) {
    const created = await newOrg(t, at(users, o.owner), { baseRole: o.baseRole });
    orgIds.push(created.id);
    for (let u = 0; u < w.users; u++) {
      const role = at(o.members, u);
      if (u !== o.owner && role !== null) await addOrgMember(t, created.id, at(users, u), role);
    }
  }
  const projectIds: string[] = [];
  for (const p of w.projects) {
    // An org's project is created over HTTP by the org's owner (POST /v2/projects with org_id).
    const created =
      p.org === null
        ? await newProject(t, at(users, p.owner))
        : await newOrgProject(t, at(users, at(w.orgs, p.org).owner), at(orgIds, p.org));
    projectIds.push(created.id);
  }
  for (let ti = 0; ti < w.teams.length; ti++) {
    for (let pi = 0; pi < w.projects.length; pi++) {
      const g = at(at(w.grants, ti), pi);
      if (g !== null) await share(t, at(teamIds, ti), at(projectIds, pi), g);
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
            expect(pureRole(w, u, p), `pure rule, user ${u} project ${p}`).toBe(want);
            const r = await t.get(`/v2/projects/${projectIds[p]}`, { token: at(users, u).token });
            if (want === null) {
              expect(r.status, `user ${u} project ${p}: ${r.text}`).toBe(404);
            } else {
              expect(r.status, `user ${u} project ${p}: ${r.text}`).toBe(200);
              expect(r.json.role, `user ${u} project ${p}`).toBe(want);
              expected.set(at(projectIds, p), want);
            }
          }
          const list = await t.get('/v2/projects?limit=200', { token: at(users, u).token });
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
      orgs: [],
      projects: [{ owner: 0, org: null }],
      grants: [[grant]],
    });
    expect(modelRole(w('viewer', 'admin'), 1, 0)).toBe('viewer');
    expect(modelRole(w('admin', 'viewer'), 1, 0)).toBe('viewer');
    expect(modelRole(w('member', 'admin'), 1, 0)).toBe('member');
    expect(modelRole(w('member', 'admin'), 0, 0)).toBe('owner');
    expect(
      modelRole(
        { users: 2, teams: [], orgs: [], projects: [{ owner: 0, org: null }], grants: [] },
        1,
        0,
      ),
    ).toBeNull();
  });

  it('the model encodes CONTRACT 3a: the org path, base_role, and the best of all paths', () => {
    // One org owned by user 0 with user 1 as `orgRole`; one team owned by user 0 with user 1
    // as team member; the org's project, shared with the team by `grant`.
    const w = (orgRole: OrgRole | null, baseRole: Base, grant: Granted | null = null): World => ({
      users: 3,
      teams: [{ owner: 0, members: [null, 'member', null] }],
      orgs: [{ owner: 0, baseRole, members: [null, orgRole, null] }],
      projects: [{ owner: 2, org: 0 }],
      grants: [[grant]],
    });
    expect(modelRole(w(null, 'admin'), 0, 0)).toBe('owner'); // the org owner
    expect(modelRole(w('admin', 'none'), 1, 0)).toBe('admin');
    expect(modelRole(w('member', 'viewer'), 1, 0)).toBe('viewer');
    expect(modelRole(w('member', 'admin'), 1, 0)).toBe('admin');
    expect(modelRole(w('member', 'none'), 1, 0)).toBeNull();
    expect(modelRole(w('member', 'none', 'admin'), 1, 0)).toBe('member'); // the team path
    expect(modelRole(w('member', 'viewer', 'admin'), 1, 0)).toBe('member'); // max of min
    expect(modelRole(w(null, 'admin'), 2, 0)).toBeNull(); // owner_id unused for an org's project
  });
});
