// Table and property tests of the pure role rules (spec 3, CONTRACT 3). The SQL twin of
// effectiveProjectRole is checked against an independent model in access-model.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  atLeast,
  canOnProject,
  canShareProject,
  canOnTeam,
  effectiveProjectRole,
  GRANTABLE_ROLES,
  higher,
  lower,
  orgProjectRole,
  PROJECT_ACTIONS,
  rank,
  ROLES,
  TEAM_ACTIONS,
  type BaseRole,
  type OrgPath,
  type ProjectAction,
  type Role,
  type Share,
  type TeamAction,
} from '../../src/access/roles.ts';
import { at } from '../helpers/checked.ts';

const share = (teamRole: Role, grantRole: Role): Share => ({ teamRole, grantRole });

describe('role order', () => {
  it('is viewer < member < admin < owner', () => {
    expect(ROLES).toEqual(['viewer', 'member', 'admin', 'owner']);
    expect(ROLES.map(rank)).toEqual([0, 1, 2, 3]);
    expect(GRANTABLE_ROLES).toEqual(['viewer', 'member', 'admin']);
  });

  it.each(ROLES.flatMap((a) => ROLES.map((b) => [a, b] as const)))(
    '%s vs %s: lower, higher, atLeast',
    (a, b) => {
      const ia = ROLES.indexOf(a);
      const ib = ROLES.indexOf(b);
      expect(lower(a, b)).toBe(ROLES[Math.min(ia, ib)]);
      expect(higher(a, b)).toBe(ROLES[Math.max(ia, ib)]);
      expect(atLeast(a, b)).toBe(ia >= ib);
    },
  );
});

describe('effectiveProjectRole: the rules of the spec', () => {
  it.each<[string, boolean, Share[], Role | null]>([
    ['grant admin + team viewer gives viewer', false, [share('viewer', 'admin')], 'viewer'],
    [
      'grant viewer + team admin gives viewer (the grant caps the team)',
      false,
      [share('admin', 'viewer')],
      'viewer',
    ],
    ['grant admin + team member gives member', false, [share('member', 'admin')], 'member'],
    ['grant member + team member gives member', false, [share('member', 'member')], 'member'],
    ['grant admin + team admin gives admin', false, [share('admin', 'admin')], 'admin'],
    ['team owner is capped by the grant', false, [share('owner', 'member')], 'member'],
    [
      'team owner with an admin grant is admin, never owner',
      false,
      [share('owner', 'admin')],
      'admin',
    ],
    ['the project owner is owner', true, [], 'owner'],
    [
      'the project owner stays owner whatever the shares',
      true,
      [share('viewer', 'viewer'), share('admin', 'admin')],
      'owner',
    ],
    ['no share and not the owner: no role (404)', false, [], null],
    [
      'best of several teams',
      false,
      [share('viewer', 'admin'), share('admin', 'member'), share('admin', 'viewer')],
      'member',
    ],
    [
      'best of several teams, order reversed',
      false,
      [share('admin', 'viewer'), share('admin', 'member'), share('viewer', 'admin')],
      'member',
    ],
    [
      'best of several teams reaches admin',
      false,
      [share('member', 'admin'), share('admin', 'admin')],
      'admin',
    ],
    [
      'several teams all capped at viewer',
      false,
      [share('viewer', 'admin'), share('admin', 'viewer')],
      'viewer',
    ],
  ])('%s', (_name, isOwner, shares, expected) => {
    expect(effectiveProjectRole(isOwner, shares)).toBe(expected);
  });

  it.each(
    ROLES.flatMap((teamRole) => GRANTABLE_ROLES.map((grantRole) => [teamRole, grantRole] as const)),
  )('team %s with grant %s gives the lower of the two', (teamRole, grantRole) => {
    const expected = ROLES[Math.min(ROLES.indexOf(teamRole), ROLES.indexOf(grantRole))];
    expect(effectiveProjectRole(false, [share(teamRole, grantRole)])).toBe(expected);
  });
});

describe('action matrix (CONTRACT 3)', () => {
  // Rows of the contract's table, by the actions the code names. `yes` lists the roles allowed.
  const projectMatrix: Record<ProjectAction, readonly Role[]> = {
    'project.read': ['viewer', 'member', 'admin', 'owner'],
    'project.read_access': ['viewer', 'member', 'admin', 'owner'],
    'env.read_values': ['member', 'admin', 'owner'],
    'frame.operate': ['member', 'admin', 'owner'],
    'frame.edit': ['member', 'admin', 'owner'],
    'project.rename': ['admin', 'owner'],
    'project.audit': ['admin', 'owner'],
    'space.manage': ['admin', 'owner'],
    'frame.manage': ['admin', 'owner'],
    'domain.manage': ['admin', 'owner'],
    'volume.manage': ['admin', 'owner'],
    'agent.manage': ['admin', 'owner'],
    'webhook.manage': ['admin', 'owner'],
    'notifications.manage': ['admin', 'owner'],
    'project.delete': ['owner'],
    'project.share': ['owner'],
  };
  const teamMatrix: Record<TeamAction, readonly Role[]> = {
    'team.read': ['viewer', 'member', 'admin', 'owner'],
    'members.read': ['viewer', 'member', 'admin', 'owner'],
    'grants.read': ['viewer', 'member', 'admin', 'owner'],
    'team.rename': ['admin', 'owner'],
    'members.manage': ['admin', 'owner'],
    'invitations.manage': ['admin', 'owner'],
    'grants.manage': ['admin', 'owner'],
    'audit.read': ['admin', 'owner'],
    'team.delete': ['owner'],
  };

  it('covers every project and team action the code knows, and no other', () => {
    expect(Object.keys(PROJECT_ACTIONS).sort()).toEqual(Object.keys(projectMatrix).sort());
    expect(Object.keys(TEAM_ACTIONS).sort()).toEqual(Object.keys(teamMatrix).sort());
  });

  const projectCells = (Object.keys(projectMatrix) as ProjectAction[]).flatMap((a) =>
    ROLES.map((r) => [a, r] as const),
  );
  it.each(projectCells)('project action %s by %s', (action, role) => {
    expect(canOnProject(role, action)).toBe(projectMatrix[action].includes(role));
  });

  const teamCells = (Object.keys(teamMatrix) as TeamAction[]).flatMap((a) =>
    ROLES.map((r) => [a, r] as const),
  );
  it.each(teamCells)('team action %s by %s', (action, role) => {
    expect(canOnTeam(role, action)).toBe(teamMatrix[action].includes(role));
  });

  it('each role includes every capability of the roles below it', () => {
    for (const action of Object.keys(PROJECT_ACTIONS) as ProjectAction[]) {
      for (let i = 1; i < ROLES.length; i++) {
        if (canOnProject(at(ROLES, i - 1), action))
          expect(canOnProject(at(ROLES, i), action)).toBe(true);
      }
    }
    for (const action of Object.keys(TEAM_ACTIONS) as TeamAction[]) {
      for (let i = 1; i < ROLES.length; i++) {
        if (canOnTeam(at(ROLES, i - 1), action)) expect(canOnTeam(at(ROLES, i), action)).toBe(true);
      }
    }
  });
});

describe('effectiveProjectRole: properties', () => {
  const role = fc.constantFrom<Role>(...ROLES);
  const grantRole = fc.constantFrom<Role>(...GRANTABLE_ROLES);
  const shareArb = fc.record({ teamRole: role, grantRole });
  const shares = fc.array(shareArb, { maxLength: 6 });
  const r = (x: Role | null) => (x === null ? -1 : ROLES.indexOf(x));

  it('the owner is always owner', () => {
    fc.assert(fc.property(shares, (s) => effectiveProjectRole(true, s) === 'owner'));
  });

  it('a non-owner gets null exactly when there is no share, and never owner', () => {
    fc.assert(
      fc.property(shares, (s) => {
        const e = effectiveProjectRole(false, s);
        expect(e === null).toBe(s.length === 0);
        expect(e).not.toBe('owner');
      }),
    );
  });

  it('never above the best grant role, nor above the best team role, unless owner', () => {
    fc.assert(
      fc.property(fc.array(shareArb, { minLength: 1, maxLength: 6 }), (s) => {
        const e = r(effectiveProjectRole(false, s));
        expect(e).toBeLessThanOrEqual(Math.max(...s.map((x) => r(x.grantRole))));
        expect(e).toBeLessThanOrEqual(Math.max(...s.map((x) => r(x.teamRole))));
      }),
    );
  });

  it('is exactly min(team, grant) of some share, and at least that of every share', () => {
    fc.assert(
      fc.property(fc.array(shareArb, { minLength: 1, maxLength: 6 }), (s) => {
        const e = r(effectiveProjectRole(false, s));
        const per = s.map((x) => Math.min(r(x.teamRole), r(x.grantRole)));
        expect(per).toContain(e);
        for (const p of per) expect(e).toBeGreaterThanOrEqual(p);
      }),
    );
  });

  it('does not depend on the order of the shares', () => {
    fc.assert(
      fc.property(shares, fc.func(fc.integer()), (s, key) => {
        const shuffled = [...s]
          .map((x, i) => ({ x, k: key(i) }))
          .sort((a, b) => a.k - b.k)
          .map((y) => y.x);
        expect(effectiveProjectRole(false, shuffled)).toBe(effectiveProjectRole(false, s));
        expect(effectiveProjectRole(false, [...s].reverse())).toBe(effectiveProjectRole(false, s));
      }),
    );
  });

  it('is monotone: adding a share never lowers the role', () => {
    fc.assert(
      fc.property(shares, shareArb, fc.nat(), (s, extra, pos) => {
        const more = [...s];
        more.splice(pos % (s.length + 1), 0, extra);
        expect(r(effectiveProjectRole(false, more))).toBeGreaterThanOrEqual(
          r(effectiveProjectRole(false, s)),
        );
      }),
    );
  });

  it('is monotone: raising a team role or a grant role never lowers the role', () => {
    fc.assert(
      fc.property(
        fc.array(shareArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        role,
        grantRole,
        (s, pos, t, g) => {
          const i = pos % s.length;
          const before = r(effectiveProjectRole(false, s));
          const raisedTeam = s.map((x, j) =>
            j === i ? { ...x, teamRole: higher(x.teamRole, t) } : x,
          );
          const raisedGrant = s.map((x, j) =>
            j === i ? { ...x, grantRole: higher(x.grantRole, g) } : x,
          );
          expect(r(effectiveProjectRole(false, raisedTeam))).toBeGreaterThanOrEqual(before);
          expect(r(effectiveProjectRole(false, raisedGrant))).toBeGreaterThanOrEqual(before);
        },
      ),
    );
  });

  it('is idempotent over duplicate shares', () => {
    fc.assert(
      fc.property(shares, (s) => {
        expect(effectiveProjectRole(false, [...s, ...s])).toBe(effectiveProjectRole(false, s));
      }),
    );
  });

  it('is the best of the effective roles of the shares taken one at a time', () => {
    fc.assert(
      fc.property(shares, shares, (a, b) => {
        const ea = effectiveProjectRole(false, a);
        const eb = effectiveProjectRole(false, b);
        const best = ea === null ? eb : eb === null ? ea : higher(ea, eb);
        expect(effectiveProjectRole(false, [...a, ...b])).toBe(best);
      }),
    );
  });
});

// CONTRACT 3a: the org path. Org roles are owner, admin and member (no viewer in an org).
const BASE_ROLES: readonly BaseRole[] = ['none', 'viewer', 'member', 'admin'];
const ORG_ROLES = ['owner', 'admin', 'member'] as const;

describe('orgProjectRole: the role the org path gives', () => {
  it.each<[Role, BaseRole, Role | null]>([
    ['owner', 'none', 'owner'],
    ['owner', 'viewer', 'owner'],
    ['owner', 'admin', 'owner'],
    ['admin', 'none', 'admin'],
    ['admin', 'viewer', 'admin'],
    ['admin', 'admin', 'admin'],
    ['member', 'none', null],
    ['member', 'viewer', 'viewer'],
    ['member', 'member', 'member'],
    ['member', 'admin', 'admin'],
  ])('org %s with base_role %s gives %s', (orgRole, baseRole, expected) => {
    expect(orgProjectRole(orgRole, baseRole)).toBe(expected);
  });
});

describe('effectiveProjectRole with the org path', () => {
  const org = (orgRole: Role, baseRole: BaseRole): OrgPath => ({ orgRole, baseRole });
  it.each<[string, Share[], OrgPath | null, Role | null]>([
    ['org owner is owner', [], org('owner', 'viewer'), 'owner'],
    [
      'org owner stays owner whatever the grants',
      [share('admin', 'admin')],
      org('owner', 'none'),
      'owner',
    ],
    ['org admin is admin', [], org('admin', 'none'), 'admin'],
    ['org member has base_role', [], org('member', 'member'), 'member'],
    ['base_role none gives nothing by itself', [], org('member', 'none'), null],
    [
      'base_role none, a team grant still counts',
      [share('member', 'admin')],
      org('member', 'none'),
      'member',
    ],
    [
      'a team grant above the base_role wins',
      [share('admin', 'admin')],
      org('member', 'viewer'),
      'admin',
    ],
    [
      'the base_role above a team grant wins',
      [share('viewer', 'admin')],
      org('member', 'member'),
      'member',
    ],
    [
      'org admin with a lower team path stays admin',
      [share('viewer', 'viewer')],
      org('admin', 'none'),
      'admin',
    ],
    ['no org membership: team paths only', [share('member', 'viewer')], null, 'viewer'],
  ])('%s', (_name, shares, o, expected) => {
    expect(effectiveProjectRole(false, shares, o)).toBe(expected);
  });

  const orgArb = fc.option(
    fc.record({
      orgRole: fc.constantFrom<Role>(...ORG_ROLES),
      baseRole: fc.constantFrom<BaseRole>(...BASE_ROLES),
    }),
  );
  const shareArb = fc.record({
    teamRole: fc.constantFrom<Role>(...ROLES),
    grantRole: fc.constantFrom<Role>(...GRANTABLE_ROLES),
  });
  const r = (x: Role | null) => (x === null ? -1 : ROLES.indexOf(x));

  it('is the higher of the org path and the team paths', () => {
    fc.assert(
      fc.property(fc.array(shareArb, { maxLength: 5 }), orgArb, (s, o) => {
        const viaOrg = o ? orgProjectRole(o.orgRole, o.baseRole) : null;
        expect(r(effectiveProjectRole(false, s, o))).toBe(
          Math.max(r(viaOrg), r(effectiveProjectRole(false, s))),
        );
        expect(effectiveProjectRole(true, s, o)).toBe('owner');
      }),
    );
  });

  it('is monotone in base_role: raising it never lowers the role', () => {
    fc.assert(
      fc.property(
        fc.array(shareArb, { maxLength: 5 }),
        fc.constantFrom<Role>(...ORG_ROLES),
        fc.constantFrom<BaseRole>(...BASE_ROLES),
        fc.constantFrom<BaseRole>(...BASE_ROLES),
        (s, orgRole, a, b) => {
          const [lo, hi] = BASE_ROLES.indexOf(a) <= BASE_ROLES.indexOf(b) ? [a, b] : [b, a];
          expect(r(effectiveProjectRole(false, s, org(orgRole, hi)))).toBeGreaterThanOrEqual(
            r(effectiveProjectRole(false, s, org(orgRole, lo))),
          );
        },
      ),
    );
  });
});

describe('canShareProject: who shares a project', () => {
  it.each<[string, Role, Role | null, boolean]>([
    ["a user's project: its owner", 'owner', null, true],
    ["a user's project: an admin by a grant may not", 'admin', null, false],
    ["an org's project: the org owner", 'owner', 'owner', true],
    ["an org's project: an org admin", 'admin', 'admin', true],
    ["an org's project: a member whose base_role is admin may not", 'admin', 'member', false],
    ["an org's project: a member who is admin by a team grant may not", 'admin', 'member', false],
    ["an org's project: an outsider admin by a team grant may not", 'admin', null, false],
  ])('%s', (_name, role, orgRole, expected) => {
    expect(canShareProject(role, orgRole)).toBe(expected);
  });
});
