// Which points a metrics query answers (docs/api.md, Frame metrics): the range, its step, and
// the rows (minute or hour) they are read from. Pure: the service gives the service's now.

/**
 * The resolutions the store keeps, in seconds: rows of a minute and of five (both kept for
 * METRICS_MINUTE_RETENTION_HOURS), and of an hour (METRICS_HOUR_RETENTION_DAYS). Five minutes
 * is the step of a day's chart: it reads 288 rows a series where minutes would be 1,440.
 */
export const MINUTE = 60;
export const FIVE_MINUTES = 300;
export const HOUR = 3600;
export const RESOLUTIONS = [MINUTE, FIVE_MINUTES, HOUR] as const;
/** The steps a query without one picks from, smallest first. */
export const DEFAULT_STEPS = [60, 300, 900, 3600, 21600] as const;
/** A default step gives at most this many points. */
export const DEFAULT_MAX_POINTS = 360;
/** More points than this is refused. */
export const MAX_POINTS = 1500;
/**
 * A range that starts this little before the minute rows' retention is still read from them
 * (its first minutes are empty): "the last 24 h" computed by a client a moment before the
 * request would otherwise fall to hourly points.
 */
export const MINUTE_GRACE_SECONDS = 15 * 60;

export interface RangeAsked {
  since?: string;
  until?: string;
  step?: number;
}

export interface Range {
  /** The start of the first point (a multiple of step since the epoch). */
  since: Date;
  /** The end of the last point. */
  until: Date;
  step: number;
  /** The rows it is read from: the coarsest resolution kept for the range that fits the step. */
  resolution: number;
}

export interface RangeError {
  path: 'since' | 'step';
  code: 'invalid_range' | 'step_too_fine' | 'too_many_points';
  message: string;
}

const floorTo = (ms: number, step: number) => Math.floor(ms / (step * 1000)) * step * 1000;
const ceilTo = (ms: number, step: number) => Math.ceil(ms / (step * 1000)) * step * 1000;

/** The start of the row of `resolution` seconds that `at` falls in. */
export const bucketStart = (at: Date, resolution: number) =>
  new Date(floorTo(at.getTime(), resolution));

/** The smallest default step of at least `resolution` that gives few enough points. */
export function defaultStep(spanSeconds: number, resolution: number) {
  const steps = DEFAULT_STEPS.filter((s) => s >= resolution);
  return steps.find((s) => Math.ceil(spanSeconds / s) <= DEFAULT_MAX_POINTS) ?? DEFAULT_STEPS[4];
}

/**
 * The range asked for, aligned to its step, or why it cannot be answered. A range that starts
 * within the minutes' retention is read from the coarsest rows that divide its step; an older
 * one from hourly rows.
 */
export function metricsRange(
  asked: RangeAsked,
  now: Date,
  minuteRetentionHours: number,
): Range | RangeError {
  const until = asked.until ? new Date(asked.until) : now;
  const since = asked.since ? new Date(asked.since) : new Date(until.getTime() - HOUR * 1000);
  if (since >= until)
    return { path: 'since', code: 'invalid_range', message: 'must be before until' };
  const oldestMinute = now.getTime() - (minuteRetentionHours * HOUR + MINUTE_GRACE_SECONDS) * 1000;
  const finest = since.getTime() >= oldestMinute ? MINUTE : HOUR;
  const step = asked.step ?? defaultStep((until.getTime() - since.getTime()) / 1000, finest);
  const resolution = [...RESOLUTIONS].reverse().find((r) => r >= finest && step % r === 0);
  if (resolution === undefined)
    return {
      path: 'step',
      code: 'step_too_fine',
      message:
        `must be a multiple of ${finest} for a range starting more than ` +
        `${minuteRetentionHours} h ago (older minutes are kept as hours)`,
    };
  const first = floorTo(since.getTime(), step);
  const end = ceilTo(until.getTime(), step);
  const points = (end - first) / (step * 1000);
  if (points > MAX_POINTS)
    return {
      path: 'step',
      code: 'too_many_points',
      message: `gives ${points} points, more than ${MAX_POINTS}: choose a larger step or range`,
    };
  return { since: new Date(first), until: new Date(end), step, resolution };
}

export const isRangeError = (r: Range | RangeError): r is RangeError => 'code' in r;
