// A frame's metrics (issue 39): the points of a range, read from the minute or hour sums the
// agents' syncs add to (metrics-ingest.ts). Who may read them: whoever may read the project.
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { fieldError, notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { frameSums } from './metrics-query-dal.ts';
import { buildPoints } from './metrics-points.ts';
import { isRangeError, metricsRange, type RangeAsked } from './metrics-range.ts';

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireProject'>;
  /** METRICS_MINUTE_RETENTION_HOURS: a range older than this is read from hour points. */
  minuteRetentionHours: number;
}

export function createFrameMetricsService({ db, clock, access, minuteRetentionHours }: Deps) {
  return {
    async metrics(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      asked: RangeAsked,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      const range = metricsRange(asked, clock.now(), minuteRetentionHours);
      if (isRangeError(range)) throw fieldError(range.path, range.code, range.message);
      // The frame's place and its sums in one statement: a frame elsewhere is 404 like none.
      const sums = await frameSums(db, { projectId, spaceId, frameId, ...range });
      if (!sums) throw notFound('frame');
      return {
        frame_id: frameId,
        since: iso(range.since),
        until: iso(range.until),
        step: range.step,
        ...buildPoints(range, sums.usage, sums.requests),
      };
    },
  };
}

export type FrameMetricsService = ReturnType<typeof createFrameMetricsService>;
