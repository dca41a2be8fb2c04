// The shape of env vars, shared by a frame's env and its previews' overrides, and the bodies
// and answer of a frame's env routes (CONTRACT 5).
import { Type } from 'typebox';
import { Nullable } from '../http/schemas.ts';

// Names a shell can export; a record's keys are checked through propertyNames, so a bad name is
// refused rather than passing unvalidated.
const EnvKeyRule = { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', minLength: 1, maxLength: 255 };
// Limits JSON Schema cannot state are in the descriptions: a value's 32 KiB count UTF-8 bytes
// (maxLength counts characters: non-ASCII values reach it sooner, 422 env_value_too_large), and
// a frame's keys and values together are capped by ENV_MAX_BYTES (422 env_too_large), well
// under the request body limit (BODY_LIMIT_BYTES, 413 body_too_large).
export const EnvValue = Type.String({
  maxLength: 32 * 1024,
  description: 'At most 32 KiB: 32,768 bytes of UTF-8 (422 env_value_too_large past it)',
});
export const envRecord = <T extends Parameters<typeof Type.Record>[1]>(
  value: T,
  what: string,
  extra: Record<string, unknown> = {},
) =>
  Type.Record(Type.String(), value, {
    propertyNames: EnvKeyRule,
    maxProperties: 500,
    description:
      `${what}. Keys match ^[A-Za-z_][A-Za-z0-9_]*$ (1..255 characters); at most 500 ` +
      "variables. Keys and values together: at most ENV_MAX_BYTES bytes of UTF-8 in the frame's " +
      'whole set (64 KiB by default; 422 env_too_large), whatever the body limit allows',
    ...extra,
  });

export const PutEnvBody = Type.Object(
  {
    vars: envRecord(EnvValue, 'The whole new set; keys left out are deleted'),
  },
  { title: 'PutEnvBody', additionalProperties: false },
);

export const PatchEnvBody = Type.Object(
  {
    vars: envRecord(
      Type.Union([EnvValue, Type.Null()]),
      'Merged into the set; null deletes a key',
      {
        minProperties: 1,
      },
    ),
  },
  { title: 'PatchEnvBody', additionalProperties: false },
);

export const EnvAnswer = Type.Object(
  {
    vars: Type.Record(Type.String(), Nullable(Type.String())),
    values_visible: Type.Boolean({ description: 'false for viewers: every value is then null' }),
    deployment: Type.Optional(
      Type.Ref('Deployment', { description: 'The config release ?deploy=true started' }),
    ),
  },
  { title: 'EnvAnswer' },
);
