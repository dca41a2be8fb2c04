// An endpoint's delivery log (admin): its deliveries newest first with every try, and what a
// person may ask of it: send a test event (`ping`), or send a delivery again. Both are
// deliveries of their own, tried once by the job queue, and logged like the others.
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Clock } from '../clock.ts';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { type EventBody, eventBody } from './events.ts';
import * as dal from './notifications-dal.ts';
import { queueDeliveries } from './notify-dal.ts';

type Delivery = NonNullable<Awaited<ReturnType<typeof dal.deliveryOf>>>;
type Attempt = Awaited<ReturnType<typeof dal.attemptsOf>>[number];

const presentAttempt = (a: Attempt) => ({
  attempt: a.attempt,
  at: iso(a.at),
  ok: a.ok,
  status_code: a.status_code,
  latency_ms: a.latency_ms,
  response_excerpt: a.response_excerpt,
  error: a.error,
});

const presentDelivery = (d: Delivery, attempts: Attempt[]) => ({
  id: d.id,
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  manual: d.manual,
  redelivery_of: d.redelivery_of,
  next_attempt_at: isoOrNull(d.next_attempt_at),
  last_error: d.last_error,
  created_at: iso(d.created_at),
  finished_at: isoOrNull(d.finished_at),
  attempts: attempts.filter((a) => a.delivery_id === d.id).map(presentAttempt),
  event: d.body as EventBody,
});

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireProject'>;
}

export function createNotificationsLog({ db, clock, access }: Deps) {
  /** The endpoint, for an admin of its project; 404 for one of another project. */
  async function endpointFor(actor: Actor, projectId: string, endpointId: string) {
    const p = await access.requireProject(actor.userId, projectId, 'notifications.manage');
    const e = await dal.endpointOf(db, projectId, endpointId);
    if (!e) throw notFound('notification endpoint');
    return { ...e, project_name: p.name };
  }

  async function withAttempts(q: Queryable, d: Delivery) {
    return presentDelivery(d, await dal.attemptsOf(q, [d.id]));
  }

  /** Writes a manual delivery of `body` and queues its job; answers it as it stands. */
  async function queueManual(endpointId: string, body: EventBody, redeliveryOf: string | null) {
    const now = clock.now();
    const id = newId('notification_delivery', now);
    return transaction(db, async (trx) => {
      await queueDeliveries(trx, [
        {
          id,
          endpoint_id: endpointId,
          event_id: body.id,
          event_type: body.type,
          body: JSON.stringify(body),
          manual: true,
          redelivery_of: redeliveryOf,
          next_attempt_at: now,
          created_at: now,
        },
      ]);
      const d = await dal.deliveryOf(trx, endpointId, id);
      if (!d) throw new Error(`delivery ${id} vanished inside its own transaction`);
      return withAttempts(trx, d);
    });
  }

  return {
    async list(
      actor: Actor,
      projectId: string,
      endpointId: string,
      limit: number,
      cursor?: string,
    ) {
      await endpointFor(actor, projectId, endpointId);
      const rows = await dal.deliveriesOf(db, endpointId, limit, decodeCursor(cursor, 1)?.[0]);
      const attempts = await dal.attemptsOf(
        db,
        rows.slice(0, limit).map((r) => r.id),
      );
      return toPage(
        rows,
        limit,
        (r) => [r.id],
        (r) => presentDelivery(r, attempts),
      );
    },

    async show(actor: Actor, projectId: string, endpointId: string, deliveryId: string) {
      await endpointFor(actor, projectId, endpointId);
      const d = await dal.deliveryOf(db, endpointId, deliveryId);
      if (!d) throw notFound('delivery');
      return withAttempts(db, d);
    },

    /** The same event (same id, same body) once more; sent even to an endpoint turned off. */
    async redeliver(actor: Actor, projectId: string, endpointId: string, deliveryId: string) {
      await endpointFor(actor, projectId, endpointId);
      const d = await dal.deliveryOf(db, endpointId, deliveryId);
      if (!d) throw notFound('delivery');
      return queueManual(endpointId, d.body as EventBody, d.id);
    },

    /** A `ping` event, to see that the receiver gets and verifies what is sent. */
    async test(actor: Actor, projectId: string, endpointId: string) {
      const e = await endpointFor(actor, projectId, endpointId);
      const now = clock.now();
      const body = eventBody({
        id: newId('notification_event', now),
        type: 'ping',
        created_at: iso(now),
        project: { id: projectId, name: e.project_name },
        data: { endpoint_id: endpointId, events: e.events },
      });
      return queueManual(endpointId, body, null);
    },
  };
}

export type NotificationsLog = ReturnType<typeof createNotificationsLog>;
