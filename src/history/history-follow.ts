// Follows of a frame's or a project's history: server-sent event streams that send every row
// committed after a position, and end when what they follow is deleted, the token is revoked
// or access is lost.
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Channel, Notifier } from '../db/notifier.ts';
import { onAccessChange } from '../access/access-changes.ts';
import type { AccessService } from '../access/access-service.ts';
import { AppError } from '../errors.ts';
import type { EventStream } from '../http/sse.ts';
import { tokenState } from './history-dal.ts';

const BATCH = 500; // rows per query while catching up
// How often a stream re-checks that the frame exists and is still visible: a fallback, for
// the notifications missed while the LISTEN connection is down, or without one.
const RECHECK_MS = 15_000;
const POLL_MS = 1_000; // without LISTEN/NOTIFY, streams poll
const HELD_MS = 100; // how soon to read again rows that were committed but not final yet

/** A stream whose access was checked; `run` pumps rows into an opened event stream. */
export interface Follow {
  run(stream: EventStream, onError: (err: unknown) => void): void;
}

/** Rows after a position; `held` when later rows exist that are not final yet (read again soon). */
export interface Batch<R> {
  rows: R[];
  held?: boolean;
}

export interface FeedSpec<R> {
  event: string;
  /** The notifications that may mean new rows or an end: a channel and a key ('*': any). */
  wakeOn: Array<[Channel, string]>;
  /** Why the stream ends because what it follows was deleted, if it was. */
  gone(): Promise<string | undefined>;
  userId: string;
  projectId: string;
  /** The token the stream was opened with: a revoked or expired one ends it. */
  tokenId: string;
  /** Where live rows begin; read after subscribing, so nothing committed in between is lost. */
  start(): Promise<string | undefined>;
  /** Rows after `position` (all when undefined), oldest first. */
  after(position: string | undefined, limit: number): Promise<Batch<R>>;
  key(r: R): string;
  present(r: R): unknown;
}

interface Deps {
  clock: Clock;
  db: Database;
  access: Pick<AccessService, 'requireProject'>;
  notifier?: Notifier;
}

export function createFollower({ db, clock, access, notifier }: Deps) {
  /** Why a stream must end, if it must: what it follows is gone, its token is revoked or expired, or the caller lost access. */
  async function endReason<R>(
    spec: FeedSpec<R>,
    recheckAccess: boolean,
  ): Promise<string | undefined> {
    const gone = await spec.gone();
    if (gone || !recheckAccess) return gone;
    const token = await tokenState(db, spec.tokenId);
    if (!token || token.revoked_at || (token.expires_at && token.expires_at <= clock.now()))
      return 'token_revoked';
    try {
      await access.requireProject(spec.userId, spec.projectId, 'project.read');
      return undefined;
    } catch (err) {
      if (err instanceof AppError && (err.status === 403 || err.status === 404))
        return 'access_revoked';
      throw err;
    }
  }

  /**
   * Streams rows as they are committed. Notifications only wake the pump; it reads what is new
   * after the last row sent. Bursts coalesce: one query at a time, and a wake-up during a query
   * makes the pump run once more.
   */
  function follow<R>(spec: FeedSpec<R>): Follow {
    return {
      run(stream, onError) {
        let position: string | undefined;
        let busy = true; // until start() has answered
        let again = false;
        // Access was checked before these subscriptions: the first pump checks it again, so a
        // revocation committed in between is not missed until the periodic re-check.
        let recheck = true;
        const wake = () => {
          if (busy) again = true;
          else void pump();
        };
        const recheckNow = () => {
          recheck = true;
          wake();
        };
        // A logout or revocation of this token, or a change of who reaches the project (on any
        // instance, by any path), ends the stream at once if the reader may no longer read.
        const offs = notifier
          ? [
              ...spec.wakeOn.map(([channel, key]) => notifier.subscribe(channel, key, wake)),
              notifier.subscribe('frameplane_tokens', spec.tokenId, recheckNow),
              onAccessChange(notifier, spec.userId, spec.projectId, recheckNow),
            ]
          : [];
        const timers = [setInterval(recheckNow, RECHECK_MS)];
        if (!notifier) timers.push(setInterval(wake, POLL_MS));
        for (const t of timers) t.unref();
        let heldTimer: NodeJS.Timeout | undefined;
        stream.onClose(() => {
          for (const off of offs) off();
          for (const t of timers) clearInterval(t);
          clearTimeout(heldTimer);
        });

        const fail = (err: unknown) => {
          if (!stream.closed) {
            onError(err);
            stream.close();
          }
        };

        async function pump() {
          busy = true;
          try {
            do {
              again = false;
              let sent = 0;
              for (;;) {
                const { rows, held } = await spec.after(position, BATCH);
                if (stream.closed) return;
                for (const r of rows) {
                  position = spec.key(r);
                  stream.send(spec.event, spec.present(r), position);
                }
                sent += rows.length;
                await stream.drained();
                if (held && !heldTimer && !stream.closed)
                  heldTimer = setTimeout(() => {
                    heldTimer = undefined;
                    wake();
                  }, HELD_MS);
                if (rows.length < BATCH || stream.closed) break;
              }
              // A wake-up that brought nothing may be a deletion; the periodic one re-checks access too.
              const full = recheck;
              recheck = false;
              const reason = sent === 0 || full ? await endReason(spec, full) : undefined;
              if (reason) {
                stream.send('end', { reason });
                stream.close();
                return;
              }
            } while (again && !stream.closed);
          } catch (err) {
            fail(err);
          } finally {
            busy = false;
          }
        }

        spec.start().then((p) => {
          position = p;
          busy = false;
          return pump();
        }, fail);
      },
    };
  }

  return follow;
}
