// Schemas of a frame's settings: env vars, domains, volumes (CONTRACT 5).
import { Type } from 'typebox';
import {
  errorWording,
  IdParam,
  ListOf,
  Nullable,
  NullableTimestamp,
  PATTERN_MESSAGES,
  Timestamp,
} from '../http/schemas.ts';
import { EnvValue, envRecord } from '../env/env-schemas.ts';
import { FrameParams } from './frames-schemas.ts';
import { HOSTNAME_MESSAGE, HOSTNAME_PATTERN } from '../domains/domain-hostname.ts';
import { MOUNT_PATH_MESSAGE, MOUNT_PATH_PATTERN } from '../volumes/volumes-service.ts';

PATTERN_MESSAGES.set(HOSTNAME_PATTERN, HOSTNAME_MESSAGE);
PATTERN_MESSAGES.set(MOUNT_PATH_PATTERN, MOUNT_PATH_MESSAGE);

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

export const DomainBody = Type.Object(
  {
    hostname: Type.String({
      minLength: 3,
      // The longest DNS name; the pattern holds the shorter limit of a verifiable one.
      maxLength: 253,
      pattern: HOSTNAME_PATTERN,
      description:
        'A DNS name (punycode for internationalized names), one trailing dot allowed; stored ' +
        'lower-cased without it',
      ...errorWording(HOSTNAME_MESSAGE, 'invalid_hostname'),
    }),
  },
  { title: 'DomainBody', additionalProperties: false },
);
export const Domain = Type.Object(
  {
    id: Type.String(),
    frame_id: Type.String(),
    hostname: Type.String(),
    target: Type.String({
      description:
        "The frame's own hostname (CONTRACT 5b): point the domain's CNAME record at it. " +
        'Verification needs the TXT record below; routing then needs the CNAME',
    }),
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
      minLength: 2,
      maxLength: 255,
      pattern: MOUNT_PATH_PATTERN,
      description:
        'Absolute and normalized; not "/" nor under /proc /sys /dev /etc /bin /usr /lib /sbin /boot /run /var/run',
      ...errorWording(MOUNT_PATH_MESSAGE, 'invalid_mount_path'),
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
