// The operator's bodies and answers for billing and ownership transfers (CONTRACT 7).
import { Type } from 'typebox';
import { StringEnum } from '../http/schemas.ts';

const SomeId = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const BillingBody = Type.Object(
  { status: StringEnum(['active', 'past_due']) },
  { additionalProperties: false },
);

export const UserBilling = Type.Object({
  user_id: Type.String(),
  status: Type.String(),
  frames_affected: Type.Integer(),
});

export const OrgBilling = Type.Object({
  org_id: Type.String(),
  status: Type.String(),
  frames_affected: Type.Integer({
    description: 'Frames of the projects the org owns that were suspended or restored',
  }),
});

export const NewOwnerBody = Type.Object(
  { user_id: SomeId('A member of the team or org; the old owner becomes admin') },
  { additionalProperties: false },
);

export const TeamOwner = Type.Object({
  team_id: Type.String(),
  owner_id: Type.String(),
  previous_owner_id: Type.String({ description: 'Now an admin (unchanged when it is owner_id)' }),
});

export const OrgOwner = Type.Object({
  org_id: Type.String(),
  owner_id: Type.String(),
  previous_owner_id: Type.String({ description: 'Now an admin (unchanged when it is owner_id)' }),
});

export const NewProjectOwnerBody = Type.Object(
  {
    user_id: Type.Optional(SomeId('The user who will own the project')),
    org_id: Type.Optional(SomeId('The organization that will own the project')),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of user_id and org_id. Grants stay; frames keep running.',
  },
);

const OwnerKind = StringEnum(['user', 'org']);

export const ProjectOwner = Type.Object({
  project_id: Type.String(),
  owner_kind: OwnerKind,
  owner_id: Type.String({ description: "The user's id, or the org's id when an org owns it" }),
  previous: Type.Object({ owner_kind: OwnerKind, owner_id: Type.String() }),
  frames_affected: Type.Integer({
    description:
      "Frames suspended or restored because the new payer's billing differs from the old one's",
  }),
});
