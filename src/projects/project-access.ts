// GET /v2/projects/<id>/access: who reaches a project and by which paths. Pure: the service
// reads the owner, the owning org and its members, and the team grants; this puts them together
// with the same rule the access module applies (roles.ts), so each person's role is the one
// their requests get.
import { higher, lower, orgProjectRole, type BaseRole, type Role } from '../access/roles.ts';
import { iso } from '../http/schemas.ts';

type PathKind = 'owner' | 'org' | 'team';

export interface Via {
  kind: PathKind;
  source: PathKind;
  team_id: string | null;
  team_role: Role | null;
  grant_role: Role | null;
  org_id: string | null;
  org_role: Role | null;
  base_role: BaseRole | null;
  role: Role;
}

interface Person {
  user_id: string;
  email: string;
  name: string;
}

export interface AccessFacts {
  projectId: string;
  /** The owning user, for a user's project. */
  user: Person | null;
  /** The owning org with its owner, for an org's project. */
  org: {
    id: string;
    name: string;
    slug: string;
    base_role: BaseRole;
    owner: Person;
    members: Array<Person & { org_role: Role }>;
  } | null;
  teamPaths: Array<
    Person & {
      grant_id: string;
      grant_role: Role;
      granted_at: Date;
      team_id: string;
      team_name: string;
      team_slug: string;
      team_role: Role;
    }
  >;
}

const none = {
  team_id: null,
  team_role: null,
  grant_role: null,
  org_id: null,
  org_role: null,
  base_role: null,
};

export function explainAccess(f: AccessFacts) {
  const members = new Map<string, Person & { role: Role; via: Via[] }>();
  const add = (p: Person, via: Via) => {
    const m = members.get(p.user_id);
    if (m) {
      m.via.push(via);
      m.role = higher(m.role, via.role);
    } else
      members.set(p.user_id, {
        user_id: p.user_id,
        email: p.email,
        name: p.name,
        role: via.role,
        via: [via],
      });
  };

  if (f.user) add(f.user, { kind: 'owner', source: 'owner', ...none, role: 'owner' });
  for (const m of f.org?.members ?? []) {
    const org = f.org;
    const role = org && orgProjectRole(m.org_role, org.base_role);
    // A plain member of an org whose base_role is none reaches nothing by the org path.
    if (!org || !role) continue;
    add(m, {
      kind: 'org',
      source: 'org',
      ...none,
      org_id: org.id,
      org_role: m.org_role,
      base_role: org.base_role,
      role,
    });
  }

  const grants = new Map<
    string,
    {
      grant_id: string;
      team: { id: string; name: string; slug: string };
      role: Role;
      created_at: string;
    }
  >();
  for (const r of f.teamPaths) {
    grants.set(r.grant_id, {
      grant_id: r.grant_id,
      team: { id: r.team_id, name: r.team_name, slug: r.team_slug },
      role: r.grant_role,
      created_at: iso(r.granted_at),
    });
    add(r, {
      kind: 'team',
      source: 'team',
      ...none,
      team_id: r.team_id,
      team_role: r.team_role,
      grant_role: r.grant_role,
      role: lower(r.team_role, r.grant_role),
    });
  }

  // The person with the owner role: the owning user, or the owning org's owner.
  const owner = f.user ?? f.org?.owner;
  if (!owner) throw new Error(`project ${f.projectId} has no owner`);
  return {
    project_id: f.projectId,
    owner: { user_id: owner.user_id, email: owner.email, name: owner.name },
    owner_kind: f.org ? ('org' as const) : ('user' as const),
    org: f.org && {
      id: f.org.id,
      name: f.org.name,
      slug: f.org.slug,
      base_role: f.org.base_role,
    },
    grants: [...grants.values()],
    members: [...members.values()],
  };
}
