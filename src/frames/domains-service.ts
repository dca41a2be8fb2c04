// Custom domains of a frame (CONTRACT 5). A hostname belongs to at most one frame in the whole
// service; the unique index domains_hostname_key decides races (pg-errors.ts maps it to 409
// domain_taken), so no read-then-insert check is needed. Deleting the frame releases its
// domains (ON DELETE CASCADE; frames-service.ts reports them).
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { fieldError, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { recordFrameEvent } from './frame-events.ts';
import { lockFrame } from './frames-dal.ts';
import type { FramesService } from './frames-service.ts';
import { pageById } from '../db/paging.ts';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Normalizes a hostname (trimmed, lower-cased, one trailing dot dropped) and checks it is a DNS
 * name a frame can answer on. Returns the stored form, or why it is refused.
 */
export function parseHostname(input: string): { hostname: string } | { error: string } {
  let h = input.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === '') return { error: 'must not be empty' };
  if (/[^\x00-\x7f]/.test(h)) {
    // Internationalized names are stored in their ASCII (punycode) form, which is what DNS holds.
    const ascii = domainToASCII(h);
    return { error: `must be ASCII; write internationalized names in punycode${ascii ? ` (here: ${ascii})` : ' (xn--…)'}` };
  }
  if (isIP(h) || isIP(h.replace(/^\[|\]$/g, ''))) return { error: 'must be a domain name, not an IP address' };
  if (h.length > 253) return { error: 'must be at most 253 characters' };
  const labels = h.split('.');
  if (labels.length < 2) return { error: 'must have at least two labels (like app.example.com)' };
  for (const l of labels) {
    if (l.length === 0) return { error: 'must not contain empty labels ("..")' };
    if (l.length > 63) return { error: `label "${l.slice(0, 20)}…" is longer than 63 characters` };
    if (!LABEL.test(l)) return { error: `label "${l}" may hold only a-z, 0-9 and "-", and must not start or end with "-"` };
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return { error: 'the last label must not be all digits' };
  return { hostname: h };
}

interface Deps { db: Database; clock: Clock; access: AccessService; frames: Pick<FramesService, 'load'> }

interface DomainRow { id: string; frame_id: string; hostname: string; created_at: Date }
const present = (d: DomainRow) => ({ id: d.id, frame_id: d.frame_id, hostname: d.hostname, created_at: iso(d.created_at) });

export function createDomainsService({ db, clock, access, frames }: Deps) {
  return {
    async list(actor: Actor, projectId: string, spaceId: string, frameId: string, limit: number, cursor?: string) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      await frames.load(projectId, spaceId, frameId);
      return pageById(db.selectFrom('domains').selectAll().where('frame_id', '=', frameId), limit, cursor, present);
    },

    async add(actor: Actor, projectId: string, spaceId: string, frameId: string, input: { hostname: string }) {
      await access.requireProject(actor.userId, projectId, 'domain.manage');
      const parsed = parseHostname(input.hostname);
      if ('error' in parsed) throw fieldError('hostname', 'invalid_hostname', `hostname ${parsed.error}.`);
      const now = clock.now();
      return transaction(db, async (trx) => {
        await frames.load(projectId, spaceId, frameId, trx);
        await lockFrame(trx, frameId);
        const d = await trx.insertInto('domains').values({ id: newId('domain', now), frame_id: frameId, hostname: parsed.hostname, created_at: now })
          .returningAll().executeTakeFirstOrThrow();
        // Domains are routing, not part of what the agent runs: no generation or version bump.
        await recordFrameEvent(trx, frameId, now, { type: 'domain_added', actorId: actor.userId, detail: { domain_id: d.id, hostname: d.hostname } });
        await recordAudit(trx, actor, now, { projectId, action: 'frame.domain_added', targetType: 'domain', targetId: d.id, after: { frame_id: frameId, hostname: d.hostname } });
        return present(d);
      });
    },

    async remove(actor: Actor, projectId: string, spaceId: string, frameId: string, domainId: string) {
      await access.requireProject(actor.userId, projectId, 'domain.manage');
      const now = clock.now();
      await transaction(db, async (trx) => {
        await frames.load(projectId, spaceId, frameId, trx);
        await lockFrame(trx, frameId);
        const d = await trx.deleteFrom('domains').where('id', '=', domainId).where('frame_id', '=', frameId).returningAll().executeTakeFirst();
        if (!d) throw notFound('domain');
        await recordFrameEvent(trx, frameId, now, { type: 'domain_removed', actorId: actor.userId, detail: { domain_id: d.id, hostname: d.hostname } });
        await recordAudit(trx, actor, now, { projectId, action: 'frame.domain_removed', targetType: 'domain', targetId: d.id, before: { frame_id: frameId, hostname: d.hostname } });
      });
    },
  };
}

export type DomainsService = ReturnType<typeof createDomainsService>;
