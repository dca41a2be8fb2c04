// Organizations (CONTRACT 3a): the request and answer shapes of /v2/orgs. An org's members and
// invitations are those of teams (the same rows and the same machinery), named with org_id.
import { Type } from 'typebox';
import {
  Email,
  errorWording,
  IdParam,
  ListOf,
  Nullable,
  PlainName,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { type GIVEN_ROLES_OF, givenRolesMessage } from '../teams/kinds.ts';
import { InvitationStatus } from '../teams/invitation-schemas.ts';
import { Slug } from '../teams/teams-schemas.ts';

export const BASE_ROLES = ['none', 'viewer', 'member', 'admin'] as const;
const BaseRole = StringEnum(BASE_ROLES, {
  description: "Every member's role on every project the org owns; none gives nothing that way",
});
// The roles kinds.ts gives in an org (GIVEN_ROLES_OF.org), as a literal for the schema.
const ORG_GIVEN = ['member', 'admin'] as const satisfies typeof GIVEN_ROLES_OF.org;
// `owner` is never given and an org has no `viewer`: either is 422 role_not_allowed.
const OrgGivenRole = StringEnum(
  ORG_GIVEN,
  errorWording(givenRolesMessage('org'), 'role_not_allowed'),
);
export const OrgRole = StringEnum(['owner', 'admin', 'member']);
const OrgName = PlainName({ maxLength: 100 });

export const Org = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    owner_id: Type.String(),
    base_role: BaseRole,
    billing_status: StringEnum(['active', 'past_due'], {
      description: 'Set by the operator; past_due suspends the frames of every project it owns',
    }),
    created_at: Timestamp,
    role: OrgRole,
    member_count: Type.Integer(),
  },
  { $id: 'Org', description: "An organization, with the caller's role and the member count" },
);
export const OrgList = ListOf(Type.Ref('Org'));
export const CreateOrgBody = Type.Object(
  { name: OrgName, slug: Slug },
  { title: 'CreateOrgBody', additionalProperties: false },
);
export const UpdateOrgBody = Type.Object(
  { name: Type.Optional(OrgName), slug: Type.Optional(Slug), base_role: Type.Optional(BaseRole) },
  { title: 'UpdateOrgBody', additionalProperties: false, minProperties: 1 },
);

export const OrgMembership = Type.Object(
  {
    org_id: Type.String(),
    user_id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: OrgRole,
    joined_at: Timestamp,
  },
  { title: 'OrgMembership' },
);
export const OrgRoleBody = Type.Object(
  { role: OrgGivenRole },
  { title: 'OrgRoleBody', additionalProperties: false },
);

export const OrgInvitation = Type.Object(
  {
    id: Type.String(),
    org_id: Type.String(),
    email: Type.String(),
    role: StringEnum(ORG_GIVEN),
    status: InvitationStatus,
    invited_by: Nullable(Type.String()),
    created_at: Timestamp,
    expires_at: Timestamp,
  },
  { $id: 'OrgInvitation' },
);
export const OrgInvitationList = ListOf(Type.Ref('OrgInvitation'));
export const CreateOrgInvitationBody = Type.Object(
  { email: Email, role: OrgGivenRole },
  { title: 'CreateOrgInvitationBody', additionalProperties: false },
);

export const OrgParams = Type.Object({ org_id: IdParam('org') });
export const OrgMemberParams = Type.Object({ org_id: IdParam('org'), user_id: IdParam('usr') });
export const OrgInvitationParams = Type.Object({
  org_id: IdParam('org'),
  invitation_id: IdParam('inv'),
});
