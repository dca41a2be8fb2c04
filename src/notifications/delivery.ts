// The deliver_notification job: one try of one delivery, signed (signature.ts), sent through
// the address guard (send.ts), logged, and either finished or queued again by the schedule of
// retry.ts. Times are the service clock's; a job's run_at is the real time that corresponds, and
// the minute sweep (or the operator's clock advance) queues at once whatever has fallen due,
// so a test that moves the clock does not wait for the real minutes.
//
// The delivery row is locked for the try (FOR UPDATE SKIP LOCKED), as the mail outbox does: two
// jobs for one delivery never both send it. The try holds its transaction open for at most
// NOTIFICATIONS_TIMEOUT_SECONDS (capped below the database's idle-in-transaction limit).
import { canOnProject } from '../access/roles.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { addDays, type Clock } from '../clock.ts';
import type { NotificationSettings } from '../config.ts';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import { enqueueEmail } from '../mail/outbox.ts';
import type { Sealer } from '../secrets.ts';
import * as dal from './delivery-dal.ts';
import { disabledEmail } from './disabled-mail.ts';
import { type EventBody, renderBody } from './events.ts';
import { queueAttempt } from './notify-dal.ts';
import { nextAttemptAt, shouldDisable } from './retry.ts';
import { type Outcome, post, type Resolve, systemResolve } from './send.ts';
import { signatureOf } from './signature.ts';

/** What each endpoint's log keeps: its newest deliveries, none older than the days. */
export const DELIVERY_LOG_KEPT = 200;
export const DELIVERY_LOG_DAYS = 30;
const USER_AGENT = 'Frameplane-Notifications/1';

interface Deps {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  access: Pick<AccessService, 'roleOf'>;
  settings: NotificationSettings;
  publicUrl: string;
  /** How host names are resolved; the system's resolver unless given (tests give a table). */
  resolve?: Resolve;
}

type Pending = NonNullable<Awaited<ReturnType<typeof dal.pendingDeliveryForUpdate>>>;

export function createNotificationDelivery(deps: Deps) {
  const { db, clock, sealer, access, settings } = deps;
  const resolve = deps.resolve ?? systemResolve;
  /** The real time at which the service clock reads `at`: graphile-worker runs jobs by it. */
  const realTime = (at: Date) => new Date(Date.now() + (at.getTime() - clock.now().getTime()));

  function send(d: Pending, at: Date): Promise<Outcome> {
    const body = renderBody(d.body as EventBody, d.format);
    const secrets = [d.secret_sealed];
    if (
      d.previous_secret_sealed &&
      d.previous_secret_expires_at &&
      at < d.previous_secret_expires_at
    )
      secrets.push(d.previous_secret_sealed);
    const signature = signatureOf(
      secrets.map((s) => sealer.open(s)),
      Math.floor(at.getTime() / 1000),
      body,
    );
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'frameplane-signature': signature,
      'frameplane-event-id': d.event_id,
      'frameplane-event-type': d.event_type,
      'frameplane-delivery-id': d.id,
    };
    return post(d.url, headers, body, {
      allowPrivate: settings.allowPrivateAddresses,
      allowHttp: settings.allowHttp,
      timeoutMs: settings.timeoutMs,
      resolve,
    });
  }

  /** Tells the project's admins (those who may manage its notifications) by e-mail. */
  async function tellAdmins(
    trx: Queryable,
    d: Pending,
    off: { failures: number; since: Date },
    at: Date,
    lastError: string | null,
  ) {
    for (const person of await dal.peopleOfProject(trx, d.project_id)) {
      const role = await access.roleOf(person.id, d.project_id, trx);
      if (!role || !canOnProject(role, 'notifications.manage')) continue;
      const mail = disabledEmail({
        to: person.email,
        projectName: d.project_name,
        projectId: d.project_id,
        endpointId: d.endpoint_id,
        url: d.url,
        failures: off.failures,
        failingSince: off.since,
        lastError,
        link: `${deps.publicUrl}/console/projects/${d.project_id}`,
      });
      await enqueueEmail(trx, sealer, at, { to: person.email, ...mail });
    }
  }

  /** An automatic delivery's try moves the endpoint's streak; a long one turns it off. */
  async function judgeEndpoint(trx: Queryable, d: Pending, outcome: Outcome, at: Date) {
    const s = await dal.moveStreak(trx, d.endpoint_id, outcome.ok, at);
    if (!s?.enabled || !s.failing_since) return;
    if (!shouldDisable(s.consecutive_failures, s.failing_since, at)) return;
    if (!(await dal.disableFailing(trx, d.endpoint_id, at))) return;
    const off = { failures: s.consecutive_failures, since: s.failing_since };
    await recordAudit(trx, null, at, {
      projectId: d.project_id,
      action: 'notification.disabled',
      targetType: 'notification_endpoint',
      targetId: d.endpoint_id,
      after: { reason: 'failing', consecutive_failures: off.failures, failing_since: off.since },
    });
    await tellAdmins(trx, d, off, at, outcome.error);
  }

  return {
    /** The job: one try of the delivery, if it is still pending and due. */
    async deliver(deliveryId: string) {
      // Kept across attempts of the transaction: when PostgreSQL aborts it (a deadlock) after
      // the receiver got the event, the retry records that try instead of sending again.
      let outcome: Outcome | undefined;
      let sentAt: Date | undefined;
      await transaction(db, async (trx) => {
        const d = await dal.pendingDeliveryForUpdate(trx, deliveryId);
        if (!d) return; // done already, or being sent by another job right now
        const now = clock.now();
        if (d.next_attempt_at && d.next_attempt_at.getTime() > now.getTime() + 1000)
          return queueAttempt(trx, d.id, realTime(d.next_attempt_at)); // woken early
        if (!d.enabled && !d.manual)
          return dal.endUntried(trx, d.id, now, 'Not sent: the endpoint was turned off');
        sentAt ??= now;
        outcome ??= await send(d, sentAt);
        const attempt = d.attempts + 1;
        const at = clock.now();
        await dal.insertAttempt(trx, {
          delivery_id: d.id,
          attempt,
          at: sentAt,
          ok: outcome.ok,
          status_code: outcome.statusCode,
          latency_ms: outcome.latencyMs,
          response_excerpt: outcome.excerpt,
          error: outcome.error,
        });
        const next = outcome.ok ? undefined : nextAttemptAt(attempt, at, d.manual);
        const error = outcome.error;
        await dal.afterAttempt(trx, d.id, { attempts: attempt, at, ok: outcome.ok, next, error });
        if (next) await queueAttempt(trx, d.id, realTime(next));
        // A ping or a redelivery is someone watching: it neither counts toward nor resets the
        // streak that turns an endpoint off.
        if (!d.manual) await judgeEndpoint(trx, d, outcome, at);
        await dal.pruneLog(trx, d.endpoint_id, DELIVERY_LOG_KEPT, addDays(at, -DELIVERY_LOG_DAYS));
      });
    },

    /** Queues now every pending delivery whose time has come (the sweep, the clock advance). */
    async queueDue(now: Date) {
      const due = await dal.dueDeliveries(db, now, 1000);
      for (const { id } of due) await queueAttempt(db, id, new Date());
      return due.length;
    },
  };
}

export type NotificationDelivery = ReturnType<typeof createNotificationDelivery>;
