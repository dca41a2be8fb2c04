import { Type } from 'typebox';
import {
  Email,
  IdParam,
  ListOf,
  NullableTimestamp,
  PlainName,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';

export { Email };
export const Password = Type.String({
  minLength: 10,
  maxLength: 1024,
  description: 'At least 10 characters',
});

export const User = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    created_at: Timestamp,
    email_verified: Type.Boolean({
      description: 'The owner proved the mailbox (a verification link or an invitation token)',
    }),
  },
  { $id: 'User' },
);

const TokenText = (description: string) =>
  Type.String({ minLength: 1, maxLength: 200, description });

export const SignupBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(PlainName({ minLength: 0, maxLength: 100 })),
    invitation_token: Type.Optional(
      TokenText('An invitation token e-mailed to `email`: proves the mailbox'),
    ),
  },
  { title: 'SignupBody', additionalProperties: false },
);
/** A sign-up or a request that waits for the e-mailed link. */
export const VerificationSent = Type.Object(
  {
    email: Type.String({ description: 'Where the link went' }),
    expires_at: Timestamp,
  },
  { title: 'VerificationSent' },
);
export const VerifyEmailBody = Type.Object(
  {
    token: TokenText('The token from the link (after #token=)'),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { title: 'VerifyEmailBody', additionalProperties: false },
);
export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { title: 'LoginBody', additionalProperties: false },
);
export const Session = Type.Object(
  {
    user: Type.Ref('User'),
    access_token: Type.String(),
    expires_at: Timestamp,
  },
  { title: 'Session' },
);

export const CreateTokenBody = Type.Object(
  {
    name: PlainName({ maxLength: 100 }),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  },
  { title: 'CreateTokenBody', additionalProperties: false },
);
const tokenFields = {
  id: Type.String(),
  name: Type.String(),
  kind: StringEnum(['session', 'personal']),
  created_at: Timestamp,
  expires_at: NullableTimestamp,
  last_used_at: NullableTimestamp,
};
export const Token = Type.Object(tokenFields, { title: 'Token' });
export const NewToken = Type.Object(
  {
    ...tokenFields,
    token: Type.String({ description: 'Shown once' }),
  },
  { title: 'NewToken' },
);
export const TokenList = ListOf(Token);
export const TokenParams = Type.Object({ token_id: IdParam('tok') });
