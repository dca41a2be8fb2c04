import { Type } from 'typebox';
import {
  errorWording,
  IdParam,
  ListOf,
  PlainName,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { RoleName } from '../projects/projects-schemas.ts';
import { givenRolesMessage } from './kinds.ts';

export { RoleName };

// The roles that may be given: `owner` is not one of them (spec 3: a team has exactly one owner,
// its creator, and a project's owner is who owns it). Request schemas list only these, so the
// OpenAPI document does too, and a request with `owner` is 422 `role_not_allowed` (CONTRACT 1)
// with a message that says what to send.
export const GIVEN_ROLES = ['viewer', 'member', 'admin'] as const;
export const GRANT_ROLE_MESSAGE =
  'must be viewer, member or admin: ' +
  "a grant's role is one of these; the owner role belongs to the project's owner alone";
const GrantRole = StringEnum(GIVEN_ROLES, errorWording(GRANT_ROLE_MESSAGE, 'role_not_allowed'));
const MemberRole = StringEnum(
  GIVEN_ROLES,
  errorWording(givenRolesMessage('team'), 'role_not_allowed'),
);
export const Slug = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[a-z0-9]+(-[a-z0-9]+)*$',
  description: 'Lowercase letters, digits and single dashes',
});
const TeamName = PlainName({ maxLength: 100 });

const teamFields = {
  id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  owner_id: Type.String(),
  created_at: Timestamp,
};
export const Team = Type.Object(
  { ...teamFields, role: RoleName, member_count: Type.Integer() },
  { $id: 'Team', description: "A team, with the caller's role and the member count" },
);
export const TeamList = ListOf(Type.Ref('Team'));
export const CreateTeamBody = Type.Object(
  { name: TeamName, slug: Slug },
  { title: 'CreateTeamBody', additionalProperties: false },
);
export const UpdateTeamBody = Type.Object(
  { name: Type.Optional(TeamName), slug: Type.Optional(Slug) },
  { title: 'UpdateTeamBody', additionalProperties: false, minProperties: 1 },
);

export const Member = Type.Object(
  {
    user_id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: RoleName,
    joined_at: Timestamp,
  },
  { $id: 'Member' },
);
export const Membership = Type.Object(
  {
    team_id: Type.String(),
    user_id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: RoleName,
    joined_at: Timestamp,
  },
  { title: 'Membership' },
);
export const MemberList = ListOf(Type.Ref('Member'));
export const RoleBody = Type.Object(
  { role: MemberRole },
  { title: 'RoleBody', additionalProperties: false },
);
export const GrantRoleBody = Type.Object(
  { role: GrantRole },
  { title: 'GrantRoleBody', additionalProperties: false },
);

export const Grant = Type.Object(
  {
    id: Type.String(),
    team_id: Type.String(),
    project_id: Type.String(),
    role: StringEnum(GIVEN_ROLES),
    created_at: Timestamp,
  },
  { $id: 'Grant' },
);
export const GrantList = ListOf(Type.Ref('Grant'));
export const CreateGrantBody = Type.Object(
  { project_id: Type.String({ minLength: 1, maxLength: 64 }), role: GrantRole },
  { title: 'CreateGrantBody', additionalProperties: false },
);

export const TeamParams = Type.Object({ team_id: IdParam('team') });
export const MemberParams = Type.Object({ team_id: IdParam('team'), user_id: IdParam('usr') });
export const GrantParams = Type.Object({ team_id: IdParam('team'), grant_id: IdParam('grt') });
