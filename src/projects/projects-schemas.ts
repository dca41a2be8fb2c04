import { Type } from 'typebox';
import { IdParam, ListOf, Nullable, PlainName, StringEnum, Timestamp } from '../http/schemas.ts';

export const RoleName = StringEnum(['viewer', 'member', 'admin', 'owner']);
const Name = PlainName({ maxLength: 100 });

export const Project = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    owner_id: Type.String({
      description: "The owning user's id, or the owning organization's id (owner_kind)",
    }),
    owner_kind: StringEnum(['user', 'org']),
    role: RoleName,
    created_at: Timestamp,
  },
  { $id: 'Project' },
);
export const Space = Type.Object(
  { id: Type.String(), project_id: Type.String(), name: Type.String(), created_at: Timestamp },
  { $id: 'Space' },
);
export const ProjectList = ListOf(Type.Ref('Project'));
export const SpaceList = ListOf(Type.Ref('Space'));

export const NameBody = Type.Object(
  { name: Name },
  { title: 'NameBody', additionalProperties: false },
);
export const CreateProjectBody = Type.Object(
  {
    name: Name,
    // The organization that owns the project (its owners and admins may create one); an id
    // that names no org of the caller's is 404, as a grant's project_id is.
    org_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { title: 'CreateProjectBody', additionalProperties: false },
);
export const ProjectParams = Type.Object({ project_id: IdParam('prj') });
export const SpaceParams = Type.Object({ project_id: IdParam('prj'), space_id: IdParam('spc') });

const Path = StringEnum(['owner', 'org', 'team']);
const Via = Type.Object({
  kind: Path,
  source: Path, // the same as kind: its first name, kept for the clients that read it
  team_id: Nullable(Type.String()),
  team_role: Nullable(RoleName),
  grant_role: Nullable(RoleName),
  org_id: Nullable(Type.String()),
  org_role: Nullable(RoleName),
  base_role: Nullable(StringEnum(['none', 'viewer', 'member', 'admin'])),
  role: RoleName,
});
export const ProjectAccess = Type.Object(
  {
    project_id: Type.String(),
    owner: Type.Object(
      { user_id: Type.String(), email: Type.String(), name: Type.String() },
      { description: "The person with the owner role: the owning user, or the owning org's owner" },
    ),
    owner_kind: StringEnum(['user', 'org']),
    org: Nullable(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        slug: Type.String(),
        base_role: StringEnum(['none', 'viewer', 'member', 'admin']),
      }),
    ),
    grants: Type.Array(
      Type.Object({
        grant_id: Type.String(),
        role: RoleName,
        created_at: Timestamp,
        team: Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String() }),
      }),
    ),
    members: Type.Array(
      Type.Object({
        user_id: Type.String(),
        email: Type.String(),
        name: Type.String(),
        role: RoleName,
        via: Type.Array(Via, {
          description: 'Each path that gives this person access; role is the best of them',
        }),
      }),
    ),
  },
  { title: 'ProjectAccess' },
);
