// A frame's metrics over a range that ends now, read again every 30 s while shown. The range's
// start is the browser's now minus its length; its end (the service's now) and the step (about
// 360 points or fewer) are left to the service.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { fp, type Schemas } from '../api.ts';
import { type FrameRef, frameKey, params } from './frames.ts';

export type FrameMetrics = Schemas['FrameMetrics'];
export type MetricsPoint = FrameMetrics['points'][number];

export interface Range {
  id: string;
  /** As the picker shows it. */
  title: string;
  /** In words, for the charts' labels. */
  words: string;
  seconds: number;
}

const HOUR = 3600;
export const RANGES: Range[] = [
  { id: '1h', title: '1 h', words: 'the last hour', seconds: HOUR },
  { id: '6h', title: '6 h', words: 'the last 6 hours', seconds: 6 * HOUR },
  { id: '24h', title: '24 h', words: 'the last 24 hours', seconds: 24 * HOUR },
  { id: '7d', title: '7 d', words: 'the last 7 days', seconds: 7 * 24 * HOUR },
  { id: '30d', title: '30 d', words: 'the last 30 days', seconds: 30 * 24 * HOUR },
];

/** How often the open Metrics tab reads again: the agent reports every 10 s, a point is 60 s. */
export const REFRESH_MS = 30_000;

const METRICS = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/metrics';

export function useFrameMetrics(frame: FrameRef, range: Range) {
  return useQuery({
    // Under the frame's key: its events (a deploy, a restart) read it again too.
    queryKey: [...frameKey(frame), 'metrics', range.id],
    // The answer with the range it is of: another range's stays shown until its own arrives.
    queryFn: async ({ signal }) => {
      // The last hour is the service's default range, by the service's own clock.
      const since =
        range.seconds === HOUR
          ? undefined
          : new Date(Date.now() - range.seconds * 1000).toISOString();
      const metrics = await fp().call(
        fp().api.GET(METRICS, { params: { ...params(frame).params, query: { since } }, signal }),
      );
      return { range, metrics };
    },
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
}
