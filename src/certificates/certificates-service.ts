// The edges' certificates (CONTRACT 5b), ordered by the service, never by an edge: so every edge
// and every restart shares one certificate per host, and the ACME server sees one account. A
// job (issue_certificates) orders what is due: hosts without one, renewals 30 days ahead, and
// failed hosts once their back-off ends. It is queued every minute by the sweep and soon after
// any change to what an agent serves (a frame placed, a domain verified), which NOTIFY tells.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import type { Issuer } from './acme.ts';
import {
  dropUnwanted,
  dueHostnames,
  lease,
  pruneChallenges,
  recordFailure,
  storeIssued,
} from './certificates-dal.ts';
import { LEASE_MS, renewalAt, retryAt } from './renewal.ts';

/** Hosts one job orders; more are left to the next job, which this one queues. */
const PER_JOB = 25;
/** Orders at once: each mostly waits on the ACME server. */
const PARALLEL = 4;
const DAY_MS = 86_400_000;

export const CERTIFICATES_JOB = 'issue_certificates';

/**
 * Queues the job: now (one at a time: a queued one is moved to now, not doubled), or at `runAt`
 * under its own `key` (a host's back-off ending), so that a retry waits for no sweep.
 */
export async function queueCertificates(q: Queryable, at?: { runAt: Date; key: string }) {
  const key = at ? `${CERTIFICATES_JOB}:${at.key}` : CERTIFICATES_JOB;
  await sql`select graphile_worker.add_job(${CERTIFICATES_JOB}, '{}'::json,
    job_key := ${key}, max_attempts := 1,
    run_at := ${at?.runAt.toISOString() ?? null}::timestamptz)`.execute(q);
}

export function createCertificates(deps: {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  issuer: Issuer;
  appsDomain: string;
  log: Logger;
}) {
  const { db, clock, sealer, issuer, appsDomain, log } = deps;

  async function orderOne(hostname: string) {
    const now = clock.now();
    if (!(await lease(db, hostname, now, new Date(now.getTime() + LEASE_MS)))) return false;
    try {
      const c = await issuer.issue(hostname);
      await storeIssued(
        db,
        hostname,
        {
          certificate: c.certificate,
          privateKeySealed: sealer.seal(c.privateKey),
          fingerprint: c.fingerprint,
          notBefore: c.notBefore,
          notAfter: c.notAfter,
          renewAt: renewalAt(c.notBefore, c.notAfter),
        },
        appsDomain,
      );
      log.info({ hostname, not_after: c.notAfter.toISOString() }, 'certificate issued');
      return true;
    } catch (err) {
      const why = (err as Error).message || String(err);
      const now = clock.now();
      const retry = await transaction(db, (trx) =>
        recordFailure(trx, hostname, why, (n) => retryAt(now, n)),
      );
      // The job's time is the machine's; the back-off is a span of the service clock.
      const runAt = retry && new Date(Date.now() + (retry.at.getTime() - now.getTime()));
      if (runAt) await queueCertificates(db, { runAt, key: hostname });
      log.warn({ hostname, err: why }, 'certificate not issued; this host backs off');
      return false;
    }
  }

  return {
    /** Orders the certificates that are due, a few at a time; answers how many were issued. */
    async issueDue(): Promise<{ issued: number; more: boolean }> {
      const dropped = await dropUnwanted(db, appsDomain);
      if (dropped.length) log.info({ hostnames: dropped }, 'certificates no frame serves dropped');
      await pruneChallenges(db, new Date(clock.now().getTime() - DAY_MS));
      const due = await dueHostnames(db, appsDomain, clock.now(), PER_JOB);
      let issued = 0;
      for (let i = 0; i < due.length; i += PARALLEL) {
        const done = await Promise.all(due.slice(i, i + PARALLEL).map(orderOne));
        issued += done.filter(Boolean).length;
      }
      const more = due.length === PER_JOB;
      if (more) await queueCertificates(db);
      return { issued, more };
    },

    /**
     * Queues the job soon after any agent's desired state changes, as a new frame or a domain
     * verified changes it (a burst of changes queues one job). Answers a function that stops.
     */
    follow(notifier: Notifier, delayMs = 500): () => void {
      let timer: NodeJS.Timeout | undefined;
      const stop = notifier.subscribe('frameplane_agent', '*', () => {
        timer ??= setTimeout(() => {
          timer = undefined;
          queueCertificates(db).catch((err) =>
            log.warn({ err: (err as Error).message }, 'certificates job not queued'),
          );
        }, delayMs);
      });
      return () => {
        stop();
        clearTimeout(timer);
      };
    },
  };
}

export type Certificates = ReturnType<typeof createCertificates>;
