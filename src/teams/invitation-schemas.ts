import { Type } from 'typebox';
import {
  Email,
  errorWording,
  IdParam,
  ListOf,
  Nullable,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { GIVEN_ROLES } from './teams-schemas.ts';

// An invitation never offers `owner` (see GIVEN_ROLES).
const InvitationRole = StringEnum(
  GIVEN_ROLES,
  errorWording(
    'must be viewer, member or admin: ' +
      "an invitation's role is one of these; a team has exactly one owner, its creator",
    'role_not_allowed',
  ),
);

export const InvitationStatus = StringEnum(['pending', 'accepted', 'expired', 'revoked']);
const invitationFields = {
  id: Type.String(),
  team_id: Type.String(),
  email: Type.String(),
  role: StringEnum(GIVEN_ROLES),
  status: InvitationStatus,
  invited_by: Nullable(Type.String()),
  created_at: Timestamp,
  expires_at: Timestamp,
};
export const Invitation = Type.Object(invitationFields, { $id: 'Invitation' });
export const InvitationList = ListOf(Type.Ref('Invitation'));
// GET /v2/user/invitations lists invitations to teams and to organizations (CONTRACT 3a):
// `kind` tells which, and `team` names either (an org is a teams row; docs/api.md).
export const InvitationForUser = Type.Object(
  {
    ...invitationFields,
    kind: StringEnum(['team', 'org']),
    team: Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String() }),
  },
  { title: 'InvitationForUser' },
);
export const CreateInvitationBody = Type.Object(
  { email: Email, role: InvitationRole },
  { title: 'CreateInvitationBody', additionalProperties: false },
);
export const InvitationParams = Type.Object({
  team_id: IdParam('team'),
  invitation_id: IdParam('inv'),
});
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
