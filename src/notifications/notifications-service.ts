// A project's notification endpoints (admin): create (the secret shown once), read, change,
// turn off and on, rotate the secret, remove. The delivery log and what a person may ask of it
// (a test event, a redelivery) are in notifications-log.ts.
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import type { Clock } from '../clock.ts';
import type { NotificationSettings } from '../config.ts';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import { fieldError, notFound, unprocessable } from '../errors.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { newSecret, type Sealer } from '../secrets.ts';
import { urlRefusal } from './address-policy.ts';
import type { NotificationEvent } from './events.ts';
import * as dal from './notifications-dal.ts';

/** Endpoints per project: enough for a chat channel and a few services, few enough to fan out. */
export const MAX_ENDPOINTS = 20;

type Endpoint = NonNullable<Awaited<ReturnType<typeof dal.endpointOf>>>;

export const presentEndpoint = (e: Endpoint) => ({
  id: e.id,
  project_id: e.project_id,
  url: e.url,
  events: e.events as NotificationEvent[],
  format: e.format,
  enabled: e.enabled,
  disabled_reason: e.disabled_reason,
  disabled_at: isoOrNull(e.disabled_at),
  consecutive_failures: e.consecutive_failures,
  failing_since: isoOrNull(e.failing_since),
  previous_secret_expires_at: isoOrNull(e.previous_secret_expires_at),
  created_by: e.created_by,
  created_at: iso(e.created_at),
  updated_at: iso(e.updated_at),
});

/** What the audit log keeps of an endpoint: its host, not its URL (a Slack URL is a secret). */
const audited = (e: { url: string; events: string[]; format: string; enabled?: boolean }) => ({
  host: new URL(e.url).host,
  events: e.events,
  format: e.format,
  ...(e.enabled === undefined ? {} : { enabled: e.enabled }),
});

export interface EndpointInput {
  url: string;
  events: NotificationEvent[];
  format?: 'json' | 'slack';
}
export type EndpointChange = Partial<EndpointInput> & { enabled?: boolean };

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireProject'>;
  sealer: Sealer;
  settings: NotificationSettings;
}

export function createNotificationsService({ db, clock, access, sealer, settings }: Deps) {
  const rules = { allowPrivate: settings.allowPrivateAddresses, allowHttp: settings.allowHttp };
  const requireAdmin = (actor: Actor, projectId: string) =>
    access.requireProject(actor.userId, projectId, 'notifications.manage');

  function checkUrl(url: string) {
    const why = urlRefusal(url, rules);
    if (why) throw fieldError('url', 'url_not_allowed', `url ${why}`);
  }

  async function endpoint(q: Queryable, projectId: string, endpointId: string, lock = false) {
    const e = await dal.endpointOf(q, projectId, endpointId, lock);
    if (!e) throw notFound('notification endpoint');
    return e;
  }

  return {
    async create(actor: Actor, projectId: string, input: EndpointInput) {
      await requireAdmin(actor, projectId);
      checkUrl(input.url);
      const now = clock.now();
      const secret = newSecret('whsec');
      const row = await transaction(db, async (trx) => {
        await dal.lockProject(trx, projectId);
        if ((await dal.countEndpoints(trx, projectId)) >= MAX_ENDPOINTS)
          throw unprocessable(
            'too_many_endpoints',
            `A project has at most ${MAX_ENDPOINTS} notification endpoints: remove one first.`,
          );
        const e = await dal.insertEndpoint(trx, {
          id: newId('notification_endpoint', now),
          project_id: projectId,
          url: input.url,
          events: input.events,
          format: input.format ?? 'json',
          secret_sealed: sealer.seal(secret),
          created_by: actor.userId,
          created_at: now,
        });
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'notification.created',
          targetType: 'notification_endpoint',
          targetId: e.id,
          after: audited(e),
        });
        return e;
      });
      return { ...presentEndpoint(row), secret };
    },

    async list(actor: Actor, projectId: string, limit: number, cursor?: string) {
      await requireAdmin(actor, projectId);
      const rows = await dal.endpointsOf(db, projectId, limit, decodeCursor(cursor, 1)?.[0]);
      return toPage(rows, limit, (r) => [r.id], presentEndpoint);
    },

    async show(actor: Actor, projectId: string, endpointId: string) {
      await requireAdmin(actor, projectId);
      return presentEndpoint(await endpoint(db, projectId, endpointId));
    },

    /** Changes what is given; turning it on again forgets its failures. */
    async update(actor: Actor, projectId: string, endpointId: string, change: EndpointChange) {
      await requireAdmin(actor, projectId);
      if (change.url !== undefined) checkUrl(change.url);
      const now = clock.now();
      return transaction(db, async (trx) => {
        const before = await endpoint(trx, projectId, endpointId, true);
        const on = change.enabled;
        const after = await dal.updateEndpoint(trx, endpointId, {
          ...(change.url !== undefined ? { url: change.url } : {}),
          ...(change.events !== undefined ? { events: change.events } : {}),
          ...(change.format !== undefined ? { format: change.format } : {}),
          ...(on === true ? { enabled: true, disabled_reason: null, disabled_at: null } : {}),
          ...(on === true ? { consecutive_failures: 0, failing_since: null } : {}),
          ...(on === false && before.enabled
            ? { enabled: false, disabled_reason: 'manual' as const, disabled_at: now }
            : {}),
          updated_at: now,
        });
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'notification.updated',
          targetType: 'notification_endpoint',
          targetId: endpointId,
          before: audited(before),
          after: audited(after),
        });
        return presentEndpoint(after);
      });
    },

    async remove(actor: Actor, projectId: string, endpointId: string) {
      await requireAdmin(actor, projectId);
      const now = clock.now();
      await transaction(db, async (trx) => {
        const before = await endpoint(trx, projectId, endpointId);
        // Its deliveries first: one being tried is locked by its job until the try is logged,
        // which then writes the endpoint's row; taking that row first would deadlock with it.
        await dal.deleteDeliveries(trx, endpointId);
        await dal.deleteEndpoint(trx, endpointId);
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'notification.deleted',
          targetType: 'notification_endpoint',
          targetId: endpointId,
          before: audited(before),
        });
      });
    },

    /**
     * A new secret, shown once. The old one signs next to it for `previousHours` (0: nothing
     * from now on); a secret rotated again in that time replaces the old one.
     */
    async rotateSecret(actor: Actor, projectId: string, endpointId: string, previousHours = 0) {
      await requireAdmin(actor, projectId);
      const now = clock.now();
      const secret = newSecret('whsec');
      const row = await transaction(db, async (trx) => {
        const before = await endpoint(trx, projectId, endpointId, true);
        const keep = previousHours > 0;
        const e = await dal.updateEndpoint(trx, endpointId, {
          secret_sealed: sealer.seal(secret),
          previous_secret_sealed: keep ? before.secret_sealed : null,
          previous_secret_expires_at: keep ? new Date(now.getTime() + previousHours * 3.6e6) : null,
          updated_at: now,
        });
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'notification.secret_rotated',
          targetType: 'notification_endpoint',
          targetId: endpointId,
          after: { previous_valid_hours: previousHours },
        });
        return e;
      });
      return { ...presentEndpoint(row), secret };
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
