// A project's events (GET /v2/projects/{id}/events): the events of all its frames, or of one
// space's, as a JSON page or a live stream, so that a console follows every frame of a space on
// one connection. Positions are (xid, event id) (migrations/0017): the cursor of a page and the
// stream's event id are the same opaque string, so either resumes the other.
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import type { Notifier } from '../db/notifier.ts';
import { AppError, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor, toPage } from '../paging.ts';
import { spaceInProject } from '../frames/frames-dal.ts';
import { type Follow, createFollower } from './history-follow.ts';
import { presentEvent } from './history-service.ts';
import * as dal from './project-events-dal.ts';
import type { ProjectEventRow, ProjectPosition } from './project-events-dal.ts';

export interface ProjectEventsQuery {
  space_id?: string;
  limit: number;
  cursor?: string;
}
export interface ProjectEventsFollow {
  space_id?: string;
  cursor?: string;
  lastEventId?: string;
}

const present = (r: ProjectEventRow) => ({
  ...presentEvent(r),
  frame_id: r.frame_id,
  space_id: r.space_id,
});
const keyOf = (r: ProjectEventRow) => [r.xid, r.id];
const validPosition = ([xid, id]: string[]) =>
  /^\d{1,20}$/.test(xid ?? '') && /^evt_[0-9A-Za-z]{0,58}$/.test(id ?? '');

/** A position from a client (cursor or Last-Event-ID, the same string), or undefined. */
function positionOf(
  value: string | undefined,
  from: 'cursor' | 'Last-Event-ID',
): ProjectPosition | undefined {
  try {
    const key = decodeCursor(value, 2, validPosition);
    return key && { xid: key[0] as string, id: key[1] as string };
  } catch (err) {
    if (from === 'cursor') throw err;
    const message = 'is not an event id of this stream';
    throw new AppError(
      422,
      'invalid_last_event_id',
      'Unprocessable content',
      `${from}: ${message}`,
      [{ path: from, message }],
    );
  }
}

interface Deps {
  clock: Clock;
  db: Database;
  access: AccessService;
  notifier?: Notifier;
}

export function createProjectEventsService({ db, clock, access, notifier }: Deps) {
  const follow = createFollower({ db, clock, access, notifier });

  async function open(actor: Actor, projectId: string, spaceId: string | undefined) {
    await access.requireProject(actor.userId, projectId, 'project.read');
    if (spaceId !== undefined && !(await spaceInProject(db, projectId, spaceId)))
      throw notFound('space');
  }

  /** The settled events after `after`; `held` when unsettled ones follow (read them soon). */
  async function read(
    projectId: string,
    spaceId: string | undefined,
    after: ProjectPosition | undefined,
    limit: number,
  ) {
    const rows = await dal.projectEventRows(db, projectId, spaceId, after, limit);
    const unsettled = rows.findIndex((r) => !r.settled);
    return unsettled < 0 ? { rows } : { rows: rows.slice(0, unsettled), held: true };
  }

  return {
    /** The project's events in order (a space's with `space_id`), a page at a time. */
    async events(actor: Actor, projectId: string, q: ProjectEventsQuery) {
      await open(actor, projectId, q.space_id);
      const after = positionOf(q.cursor, 'cursor');
      const { rows } = await read(projectId, q.space_id, after, q.limit + 1);
      return toPage(rows, q.limit, keyOf, present);
    },

    /** Follows the events: after Last-Event-ID or the cursor when given; otherwise only new ones. */
    async followEvents(actor: Actor, projectId: string, o: ProjectEventsFollow): Promise<Follow> {
      await open(actor, projectId, o.space_id);
      const resume =
        o.lastEventId !== undefined
          ? positionOf(o.lastEventId, 'Last-Event-ID')
          : positionOf(o.cursor, 'cursor');
      return follow<ProjectEventRow>({
        event: 'frame_event',
        // Any frame's events may be this project's: its frames change, and the wake-up names
        // only the frame. A wake-up of another project's frame costs one index probe.
        wakeOn: [['frameplane_frame_events', '*']],
        gone: async () =>
          (await dal.projectExists(db, projectId)) ? undefined : 'project_deleted',
        userId: actor.userId,
        tokenId: actor.tokenId,
        projectId,
        async start() {
          // From now on: every transaction still running, or later, writes after the horizon.
          return encodeCursor(
            resume ? [resume.xid, resume.id] : [await dal.eventHorizon(db), 'evt_'],
          );
        },
        after: (position, limit) =>
          read(projectId, o.space_id, positionOf(position, 'Last-Event-ID'), limit),
        key: (r) => encodeCursor(keyOf(r)),
        present,
      });
    },
  };
}

export type ProjectEventsService = ReturnType<typeof createProjectEventsService>;
