// Schemas of a frame's settings: env vars, domains, volumes (CONTRACT 5).
import { Type } from 'typebox';
import { IdParam, ListOf, Nullable, NullableTimestamp, Timestamp } from '../http/schemas.ts';
import { FrameParams } from './frames-schemas.ts';

// Names a shell can export; a record's keys are checked through propertyNames, so a bad name is
// refused rather than passing unvalidated.
const EnvKeyRule = { pattern: '^[A-Za-z_][A-Za-z0-9_]*$', minLength: 1, maxLength: 255 };
const EnvValue = Type.String({ maxLength: 32 * 1024, description: 'At most 32 KiB (UTF-8)' });
const envRecord = <T extends Parameters<typeof Type.Record>[1]>(
  value: T,
  extra: Record<string, unknown> = {},
) =>
  Type.Record(Type.String(), value, {
    propertyNames: EnvKeyRule,
    maxProperties: 500,
    description: 'Keys match ^[A-Za-z_][A-Za-z0-9_]*$ (1..255 characters); at most 500 variables',
    ...extra,
  });

export const PutEnvBody = Type.Object(
  {
    vars: envRecord(EnvValue, { description: 'The whole new set; keys left out are deleted' }),
  },
  { title: 'PutEnvBody', additionalProperties: false },
);

export const PatchEnvBody = Type.Object(
  {
    vars: envRecord(Type.Union([EnvValue, Type.Null()]), {
      minProperties: 1,
      description: 'Merged into the set; null deletes a key',
    }),
  },
  { title: 'PatchEnvBody', additionalProperties: false },
);

export const EnvAnswer = Type.Object(
  {
    vars: Type.Record(Type.String(), Nullable(Type.String())),
    values_visible: Type.Boolean({ description: 'false for viewers: every value is then null' }),
  },
  { title: 'EnvAnswer' },
);

export const DomainBody = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 300,
      description: 'A DNS name (punycode for internationalized names); stored lower-cased',
    }),
  },
  { title: 'DomainBody', additionalProperties: false },
);
export const Domain = Type.Object(
  {
    id: Type.String(),
    frame_id: Type.String(),
    hostname: Type.String(),
    created_at: Timestamp,
    verified: Type.Boolean({ description: 'Proven in DNS; only verified domains are routed' }),
    verified_at: NullableTimestamp,
    verification: Type.Object(
      {
        type: Type.Literal('TXT'),
        name: Type.String({
          description: 'Where the record goes: _frameplane-challenge.<hostname>',
        }),
        value: Type.String({
          description: 'The exact value: frameplane-verify=<token of this claim>',
        }),
      },
      { description: 'The DNS record that proves ownership; then POST …/domains/<id>/verify' },
    ),
  },
  { title: 'Domain' },
);
export const DomainList = ListOf(Domain);
export const DomainParams = Type.Object({ ...FrameParams.properties, domain_id: IdParam('dom') });

export const VolumeBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$',
    }),
    mount_path: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Absolute and normalized; not "/" nor under /proc /sys /dev /etc /bin /usr /lib /sbin /boot /run /var/run',
    }),
    size_gb: Type.Integer({ minimum: 1, maximum: 16384 }),
  },
  { title: 'VolumeBody', additionalProperties: false },
);
export const Volume = Type.Object(
  {
    id: Type.String(),
    frame_id: Type.String(),
    name: Type.String(),
    mount_path: Type.String(),
    size_gb: Type.Integer(),
    created_at: Timestamp,
  },
  { title: 'Volume' },
);
export const VolumeList = ListOf(Volume);
export const VolumeParams = Type.Object({ ...FrameParams.properties, volume_id: IdParam('vol') });
