// Custom domains of a frame (CONTRACT 5), with proof of ownership (issue 12, item 7). A POST is
// a pending claim holding a random token; the claim is attached (verified, routed) once its
// owner publishes the token as a DNS TXT record (domain-verification.ts) and asks to verify.
// At most one verified claim per hostname in the whole service: the partial unique index
// domains_hostname_key (migration 0012) is the invariant. Pending claims of several frames may
// coexist, so claiming first blocks nobody and a POST never tells whether others claimed the
// name; the claim that verifies deletes the others in the same transaction. Deleting the frame
// releases its domains (ON DELETE CASCADE; frames/frames-service.ts reports them).
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { FrameScope } from '../frames/frame-scope.ts';
import type { AccessService } from '../access/access-service.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { conflict, fieldError, notFound } from '../errors.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { pageById } from '../db/paging.ts';
import { parseHostname } from './domain-hostname.ts';
import { frameHostname } from '../frames/frame-address.ts';
import {
  challengeOf,
  checkChallenge,
  newVerificationToken,
  type TxtResolver,
} from './domain-verification.ts';
import * as dal from './domains-dal.ts';
import { notifyAgents, recordFrameEvent, recordPartChange } from '../frames/frame-events.ts';
import { lockFrame, lockFrames } from '../frames/frames-dal.ts';
import type { FramesService } from '../frames/frames-service.ts';

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  frames: Pick<FramesService, 'load'>;
  dns: TxtResolver;
  /** The domain of frames' hostnames (APPS_DOMAIN): a domain's CNAME target is under it. */
  appsDomain: string;
}

interface DomainRow {
  id: string;
  frame_id: string;
  hostname: string;
  created_at: Date;
  verification_token: string;
  verified_at: Date | null;
}
/** `target`: the frame's own hostname, where the domain's CNAME points (CONTRACT 5b). */
const present = (d: DomainRow, target: string) => ({
  id: d.id,
  frame_id: d.frame_id,
  hostname: d.hostname,
  target,
  created_at: iso(d.created_at),
  verified: d.verified_at !== null,
  verified_at: isoOrNull(d.verified_at),
  verification: challengeOf(d.hostname, d.verification_token),
});

const taken = () =>
  conflict('domain_taken', 'That hostname is already attached (verified) to a frame.');

export function createDomainsService({ db, clock, access, frames, dns, appsDomain }: Deps) {
  /** The frame (404 outside this project and space) and its hostname, a CNAME's target. */
  async function targetOf(projectId: string, spaceId: string, frameId: string, q?: Queryable) {
    const f = await frames.load(projectId, spaceId, frameId, q);
    return frameHostname(f.hostname_label, appsDomain);
  }

  return {
    async list(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      limit: number,
      cursor?: string,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      const target = await targetOf(projectId, spaceId, frameId);
      return pageById(dal.domainsOfFrame(db, frameId), limit, cursor, (d) => present(d, target));
    },

    /**
     * A pending claim. 409 only for what is public anyway (a verified hostname) or for the
     * frame's own claim: a POST never tells whether other frames claimed the name.
     */
    async add(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      input: { hostname: string },
    ) {
      await access.requireProject(actor.userId, projectId, 'domain.manage');
      const parsed = parseHostname(input.hostname);
      if ('error' in parsed) {
        throw fieldError('hostname', 'invalid_hostname', `hostname ${parsed.error}.`);
      }
      const { hostname } = parsed;
      const now = clock.now();
      return transaction(db, async (trx) => {
        const target = await targetOf(projectId, spaceId, frameId, trx);
        // The hostname first, then the frame: verify() takes them in the same order.
        await dal.lockHostname(trx, hostname);
        await lockFrame(trx, frameId);
        const known = await dal.blockingClaims(trx, hostname, frameId);
        if (known.some((d) => d.verified_at !== null)) throw taken();
        if (known.length > 0) {
          throw conflict(
            'domain_already_added',
            'This frame already has a claim on that hostname; ' +
              'verify it with POST …/domains/<domain_id>/verify.',
          );
        }
        const d = await dal.insertDomain(trx, {
          id: newId('domain', now),
          frame_id: frameId,
          hostname,
          created_at: now,
          verification_token: newVerificationToken(),
          verified_at: null,
        });
        // Pending domains are not routed: no generation or version bump, nothing for the agent.
        await recordChange(trx, actor, now, projectId, d, 'added');
        return present(d, target);
      });
    },

    /**
     * Checks the claim's TXT record and, when it holds, attaches the hostname to this frame and
     * deletes every other claim of it. The DNS look-up runs outside the transaction (no lock
     * is held across the network); a failed check writes nothing.
     */
    async verify(actor: Actor, { projectId, spaceId, frameId }: FrameScope, domainId: string) {
      await access.requireProject(actor.userId, projectId, 'domain.manage');
      const target = await targetOf(projectId, spaceId, frameId);
      const claim = await dal.domainOfFrame(db, frameId, domainId);
      if (!claim) throw notFound('domain');
      if (claim.verified_at) return present(claim, target);
      await checkChallenge(dns, claim.hostname, claim.verification_token);
      const now = clock.now();
      return transaction(db, async (trx) => {
        await frames.load(projectId, spaceId, frameId, trx);
        await dal.lockHostname(trx, claim.hostname);
        const claims = await dal.claimsOf(trx, claim.hostname);
        const mine = claims.find((d) => d.id === claim.id);
        const winner = claims.find((d) => d.verified_at !== null);
        // A concurrent verify of this very claim won; or another frame proved it first (and
        // deleted this claim).
        if (winner && winner.id === claim.id) return present(winner, target);
        if (winner) throw taken();
        if (!mine) throw notFound('domain');
        const others = claims.filter((d) => d.id !== claim.id);
        // Every frame this touches, locked in id order as elsewhere (writers cannot deadlock).
        const ids = [...new Set([frameId, ...others.map((d) => d.frame_id)])].sort();
        const locked = await lockFrames(trx, ids);
        const d = await dal.markVerified(trx, claim.id, now);
        // Returned rows only: a claim whose frame was deleted meanwhile is already gone.
        const released = await dal.deleteDomains(
          trx,
          others.map((o) => o.id),
        );
        await recordChange(trx, actor, now, projectId, d, 'verified');
        for (const o of released) await releaseClaim(trx, o, locked, now);
        // The hostname is now routed: the frame's agent hears of it at once.
        await notifyAgents(trx, [locked.find((f) => f.id === frameId)?.agent_id ?? null]);
        return present(d, target);
      });
    },

    async remove(actor: Actor, { projectId, spaceId, frameId }: FrameScope, domainId: string) {
      await access.requireProject(actor.userId, projectId, 'domain.manage');
      const now = clock.now();
      await transaction(db, async (trx) => {
        await frames.load(projectId, spaceId, frameId, trx);
        const frame = await lockFrame(trx, frameId);
        const d = await dal.deleteDomainOfFrame(trx, frameId, domainId);
        if (!d) throw notFound('domain');
        await recordChange(trx, actor, now, projectId, d, 'removed');
        if (d.verified_at) await notifyAgents(trx, [frame?.agent_id ?? null]);
      });
    },
  };
}

/** The frame event (`domain_<change>`) and audit entry of a change the actor made. */
function recordChange(
  trx: Queryable,
  actor: Actor,
  now: Date,
  projectId: string,
  d: DomainRow,
  change: 'added' | 'verified' | 'removed',
) {
  return recordPartChange(trx, actor, now, {
    projectId,
    frameId: d.frame_id,
    part: 'domain',
    id: d.id,
    change,
    detail: { domain_id: d.id, hostname: d.hostname },
    state: { frame_id: d.frame_id, hostname: d.hostname },
  });
}

/**
 * Tells the frame and project of a claim deleted because another frame verified the hostname.
 * No actor: who verified it, and from which project, is not theirs to know.
 */
async function releaseClaim(
  trx: Queryable,
  d: DomainRow,
  locked: Array<{ id: string; project_id: string }>,
  now: Date,
) {
  const detail = { domain_id: d.id, hostname: d.hostname, reason: 'verified_by_another_frame' };
  await recordFrameEvent(trx, d.frame_id, now, { type: 'domain_released', detail });
  const projectId = locked.find((f) => f.id === d.frame_id)?.project_id;
  await recordAudit(trx, null, now, {
    projectId,
    action: 'frame.domain_released',
    targetType: 'domain',
    targetId: d.id,
    before: { frame_id: d.frame_id, hostname: d.hostname },
    after: { reason: detail.reason },
  });
}

export type DomainsService = ReturnType<typeof createDomainsService>;
