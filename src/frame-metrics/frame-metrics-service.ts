// A frame's metrics (issue 39): the points of a range, read from the minute or hour sums the
// agents' syncs add to (metrics-ingest.ts), as JSON text (closed-steps.ts remembers the steps
// that can no longer change). Who may read them: whoever may read the project.
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { fieldError, notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { frameSums } from './metrics-query-dal.ts';
import type { Static } from 'typebox';
import type { FrameMetrics } from './frame-metrics-schemas.ts';
import type { ClosedSteps } from './closed-steps.ts';
import { isRangeError, metricsRange, type RangeAsked } from './metrics-range.ts';

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireProject'>;
  /** METRICS_MINUTE_RETENTION_HOURS: a range older than this is read from hour points. */
  minuteRetentionHours: number;
  closedSteps: ClosedSteps;
}

export function createFrameMetricsService(deps: Deps) {
  const { db, clock, access, minuteRetentionHours, closedSteps } = deps;
  return {
    async metrics(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      asked: RangeAsked,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      const now = clock.now();
      const range = metricsRange(asked, now, minuteRetentionHours);
      if (isRangeError(range)) throw fieldError(range.path, range.code, range.message);
      const head = {
        frame_id: frameId,
        since: iso(range.since),
        until: iso(range.until),
        step: range.step,
      } satisfies Omit<Static<typeof FrameMetrics>, 'points' | 'replicas'>;
      // The frame's place is read with its rows, in one statement, whatever is remembered: a
      // frame elsewhere is 404 like none.
      const text = await closedSteps.text(frameId, range, head, now, (rest) =>
        frameSums(db, { projectId, spaceId, frameId, ...rest }),
      );
      if (text === undefined) throw notFound('frame');
      return text;
    },
  };
}

export type FrameMetricsService = ReturnType<typeof createFrameMetricsService>;
