// A frame's env vars (frame_env), sealed at rest; env-service.ts holds the rules.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** The sealed values, by key order. */
export function envRows(q: Queryable, frameId: string) {
  return q
    .selectFrom('frame_env')
    .select(['key', 'value_sealed'])
    .where('frame_id', '=', frameId)
    .orderBy('key')
    .execute();
}

/** The names only, for those who may not read the values. */
export function envKeys(q: Queryable, frameId: string) {
  return q
    .selectFrom('frame_env')
    .select('key')
    .where('frame_id', '=', frameId)
    .orderBy('key')
    .execute();
}

export function deleteEnvKeys(q: Queryable, frameId: string, keys: string[]) {
  return q
    .deleteFrom('frame_env')
    .where('frame_id', '=', frameId)
    .where('key', 'in', keys)
    .execute();
}

export function upsertEnv(
  q: Queryable,
  frameId: string,
  rows: Array<{ key: string; value_sealed: string }>,
) {
  return q
    .insertInto('frame_env')
    .values(rows.map((r) => ({ frame_id: frameId, ...r })))
    .onConflict((oc) =>
      oc
        .columns(['frame_id', 'key'])
        .doUpdateSet((eb) => ({ value_sealed: eb.ref('excluded.value_sealed') })),
    )
    .execute();
}

/** Records the saved env's digest on the frame (a new version, not a new generation). */
export function setEnvDigest(q: Queryable, frameId: string, digest: string, at: Date) {
  return q
    .updateTable('frames')
    .set({ env_digest: digest, version: sql`version + 1`, updated_at: at })
    .where('id', '=', frameId)
    .execute();
}
