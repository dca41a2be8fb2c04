// Schemas of a frame's volumes (CONTRACT 5).
import { Type } from 'typebox';
import { errorWording, IdParam, ListOf, PATTERN_MESSAGES, Timestamp } from '../http/schemas.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import { MOUNT_PATH_MESSAGE, MOUNT_PATH_PATTERN } from './volumes-service.ts';

PATTERN_MESSAGES.set(MOUNT_PATH_PATTERN, MOUNT_PATH_MESSAGE);

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
const ConfigRelease = Type.Ref('Deployment', {
  description: 'The config release ?deploy=true started, which runs the new set of volumes',
});
export const AddedVolume = Type.Object(
  { ...Volume.properties, deployment: Type.Optional(ConfigRelease) },
  { title: 'AddedVolume' },
);
export const RemovedVolume = Type.Object({ deployment: ConfigRelease }, { title: 'RemovedVolume' });
export const VolumeParams = Type.Object({ ...FrameParams.properties, volume_id: IdParam('vol') });
