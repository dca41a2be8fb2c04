// Custom domains of frames (domains-service.ts holds the rules of claims and proof).
import { type Insertable, sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

/** A frame's domains, as a query for a keyset page. */
export function domainsOfFrame(q: Queryable, frameId: string) {
  return q.selectFrom('domains').selectAll().where('frame_id', '=', frameId);
}

/** What deleting the frame releases (the rows go with it, ON DELETE CASCADE). */
export function domainsReleasedWith(q: Queryable, frameId: string) {
  return q
    .selectFrom('domains')
    .select(['id', 'hostname'])
    .where('frame_id', '=', frameId)
    .orderBy('id')
    .execute();
}

// Serializes the claims of one hostname (add and verify) across instances. The two-key form
// (class, hash) keeps these keys apart from every other advisory lock of the service.
const LOCK_HOSTNAME = 1207;
export function lockHostname(q: Queryable, hostname: string) {
  return sql`select pg_advisory_xact_lock(${LOCK_HOSTNAME}, hashtext(${hostname}))`.execute(q);
}

/** The claims of a hostname that stop this frame from adding one: a verified one, or its own. */
export function blockingClaims(q: Queryable, hostname: string, frameId: string) {
  return q
    .selectFrom('domains')
    .select(['frame_id', 'verified_at'])
    .where('hostname', '=', hostname)
    .where((eb) => eb.or([eb('verified_at', 'is not', null), eb('frame_id', '=', frameId)]))
    .execute();
}

export function claimsOf(q: Queryable, hostname: string) {
  return q.selectFrom('domains').selectAll().where('hostname', '=', hostname).execute();
}

export function domainOfFrame(q: Queryable, frameId: string, domainId: string) {
  return q
    .selectFrom('domains')
    .selectAll()
    .where('id', '=', domainId)
    .where('frame_id', '=', frameId)
    .executeTakeFirst();
}

export function insertDomain(q: Queryable, domain: Insertable<DB['domains']>) {
  return q.insertInto('domains').values(domain).returningAll().executeTakeFirstOrThrow();
}

export function markVerified(q: Queryable, domainId: string, at: Date) {
  return q
    .updateTable('domains')
    .set({ verified_at: at })
    .where('id', '=', domainId)
    .where('verified_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes these claims; returns the rows that were still there. */
export async function deleteDomains(q: Queryable, domainIds: string[]) {
  if (domainIds.length === 0) return [];
  return q.deleteFrom('domains').where('id', 'in', domainIds).returningAll().execute();
}

export function deleteDomainOfFrame(q: Queryable, frameId: string, domainId: string) {
  return q
    .deleteFrom('domains')
    .where('id', '=', domainId)
    .where('frame_id', '=', frameId)
    .returningAll()
    .executeTakeFirst();
}
