// A project's notification endpoints and their delivery log, as the admin API reads and
// changes them (the job's statements are in delivery-dal.ts, the queueing in notify-dal.ts).
import type { Updateable } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

const ENDPOINT_COLUMNS = [
  'id',
  'project_id',
  'url',
  'events',
  'format',
  'secret_sealed',
  'previous_secret_sealed',
  'previous_secret_expires_at',
  'enabled',
  'disabled_reason',
  'disabled_at',
  'consecutive_failures',
  'failing_since',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** Locks the project's row while its endpoints are counted and one is added. */
export async function lockProject(q: Queryable, projectId: string) {
  await q
    .selectFrom('projects')
    .select('id')
    .where('id', '=', projectId)
    .forNoKeyUpdate()
    .execute();
}

export async function countEndpoints(q: Queryable, projectId: string) {
  const row = await q
    .selectFrom('notification_endpoints')
    .select((s) => s.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export function insertEndpoint(
  q: Queryable,
  e: {
    id: string;
    project_id: string;
    url: string;
    events: string[];
    format: 'json' | 'slack';
    secret_sealed: string;
    created_by: string;
    created_at: Date;
  },
) {
  return q
    .insertInto('notification_endpoints')
    .values({ ...e, updated_at: e.created_at })
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** A page of the project's endpoints in creation order, after `afterId`. */
export function endpointsOf(q: Queryable, projectId: string, limit: number, afterId?: string) {
  let query = q
    .selectFrom('notification_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('project_id', '=', projectId);
  if (afterId) query = query.where('id', '>', afterId);
  return query
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export function endpointOf(q: Queryable, projectId: string, endpointId: string, lock = false) {
  const query = q
    .selectFrom('notification_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('project_id', '=', projectId)
    .where('id', '=', endpointId);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

export function updateEndpoint(
  q: Queryable,
  endpointId: string,
  set: Updateable<DB['notification_endpoints']>,
) {
  return q
    .updateTable('notification_endpoints')
    .set(set)
    .where('id', '=', endpointId)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Deletes the endpoint's deliveries (their tries go with them), waiting for one being tried. */
export async function deleteDeliveries(q: Queryable, endpointId: string) {
  await q.deleteFrom('notification_deliveries').where('endpoint_id', '=', endpointId).execute();
}

/** Deletes the endpoint; deliveries left go with it (ON DELETE CASCADE). */
export async function deleteEndpoint(q: Queryable, endpointId: string) {
  await q.deleteFrom('notification_endpoints').where('id', '=', endpointId).execute();
}

const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event_id',
  'event_type',
  'body',
  'manual',
  'redelivery_of',
  'status',
  'attempts',
  'next_attempt_at',
  'last_error',
  'created_at',
  'finished_at',
] as const;

/** A page of the endpoint's deliveries, newest first, before `beforeId`. */
export function deliveriesOf(q: Queryable, endpointId: string, limit: number, beforeId?: string) {
  let query = q
    .selectFrom('notification_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('endpoint_id', '=', endpointId);
  if (beforeId) query = query.where('id', '<', beforeId);
  return query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export function deliveryOf(q: Queryable, endpointId: string, deliveryId: string) {
  return q
    .selectFrom('notification_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/** The tries of these deliveries, oldest first. */
export function attemptsOf(q: Queryable, deliveryIds: string[]) {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return q
    .selectFrom('notification_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
}
