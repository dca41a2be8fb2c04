// The operator's bodies and answers for billing and ownership transfers (CONTRACT 7).
import { Type } from 'typebox';
import { errorWording, StringEnum } from '../http/schemas.ts';

const SomeId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const BillingBody = Type.Object(
  { status: StringEnum(['active', 'past_due']) },
  { title: 'BillingBody', additionalProperties: false },
);

export const UserBilling = Type.Object(
  {
    user_id: Type.String(),
    status: Type.String(),
    frames_affected: Type.Integer(),
  },
  { title: 'UserBilling' },
);

export const OrgBilling = Type.Object(
  {
    org_id: Type.String(),
    status: Type.String(),
    frames_affected: Type.Integer({
      description: 'Frames of the projects the org owns that were suspended or restored',
    }),
  },
  { title: 'OrgBilling' },
);

export const NewOwnerBody = Type.Object(
  { user_id: SomeId('A member of the team or org; the old owner becomes admin') },
  { title: 'NewOwnerBody', additionalProperties: false },
);

export const TeamOwner = Type.Object(
  {
    team_id: Type.String(),
    owner_id: Type.String(),
    previous_owner_id: Type.String({ description: 'Now an admin (unchanged when it is owner_id)' }),
  },
  { title: 'TeamOwner' },
);

export const OrgOwner = Type.Object(
  {
    org_id: Type.String(),
    owner_id: Type.String(),
    previous_owner_id: Type.String({ description: 'Now an admin (unchanged when it is owner_id)' }),
  },
  { title: 'OrgOwner' },
);

// Exactly one of the two, said by the schema (a oneOf of the two fields) so that the OpenAPI
// document says it too; the outer object declares both, so an unknown field is named.
const NewUserOwner = SomeId('The user who will own the project');
const NewOrgOwner = SomeId('The organization that will own the project');
export const NewProjectOwnerBody = Type.Object(
  { user_id: Type.Optional(NewUserOwner), org_id: Type.Optional(NewOrgOwner) },
  {
    title: 'NewProjectOwnerBody',
    additionalProperties: false,
    oneOf: [Type.Object({ user_id: NewUserOwner }), Type.Object({ org_id: NewOrgOwner })],
    description: 'Exactly one of user_id and org_id. Grants stay; frames keep running.',
    ...errorWording(
      'send exactly one of user_id (the id of the user who will own the project) and org_id ' +
        '(the id of the organization that will)',
      'one_owner_required',
    ),
  },
);

const OwnerKind = StringEnum(['user', 'org']);

export const ProjectOwner = Type.Object(
  {
    project_id: Type.String(),
    owner_kind: OwnerKind,
    owner_id: Type.String({ description: "The user's id, or the org's id when an org owns it" }),
    previous: Type.Object({ owner_kind: OwnerKind, owner_id: Type.String() }),
    frames_affected: Type.Integer({
      description:
        "Frames suspended or restored because the new payer's billing differs from the old one's",
    }),
  },
  { title: 'ProjectOwner' },
);
