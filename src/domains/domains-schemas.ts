// Schemas of a frame's custom domains (CONTRACT 5).
import { Type } from 'typebox';
import {
  errorWording,
  IdParam,
  ListOf,
  NullableTimestamp,
  PATTERN_MESSAGES,
  Timestamp,
} from '../http/schemas.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import { HOSTNAME_MESSAGE, HOSTNAME_PATTERN } from './domain-hostname.ts';

PATTERN_MESSAGES.set(HOSTNAME_PATTERN, HOSTNAME_MESSAGE);

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
