// Persistent volumes of frames (volumes-service.ts holds the rules).
import type { Insertable } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

/** A frame's volumes, as a query for a keyset page. */
export function volumesOfFrame(q: Queryable, frameId: string) {
  return q.selectFrom('volumes').selectAll().where('frame_id', '=', frameId);
}

/** What deleting the frame releases (the rows go with it, ON DELETE CASCADE). */
export function volumesReleasedWith(q: Queryable, frameId: string) {
  return q
    .selectFrom('volumes')
    .select(['id', 'name', 'mount_path', 'size_gb'])
    .where('frame_id', '=', frameId)
    .orderBy('id')
    .execute();
}

export function insertVolume(q: Queryable, volume: Insertable<DB['volumes']>) {
  return q.insertInto('volumes').values(volume).returningAll().executeTakeFirstOrThrow();
}

export function deleteVolumeOfFrame(q: Queryable, frameId: string, volumeId: string) {
  return q
    .deleteFrom('volumes')
    .where('id', '=', volumeId)
    .where('frame_id', '=', frameId)
    .returningAll()
    .executeTakeFirst();
}
