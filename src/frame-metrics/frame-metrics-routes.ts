// A frame's metrics (issue 39): CPU, memory, network and restarts of its replicas, and the
// requests its edge answered, as points of one step over a range.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { jsonOrText } from '../http/json-text.ts';
import { problemResponses } from '../http/schemas.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import type { FrameMetricsService } from './frame-metrics-service.ts';
import { FrameMetrics, MetricsQuery } from './frame-metrics-schemas.ts';

export function frameMetricsRoutes({
  frameMetrics,
}: {
  frameMetrics: FrameMetricsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id/metrics',
      {
        schema: {
          tags: ['frames'],
          params: FrameParams,
          querystring: MetricsQuery,
          response: { 200: FrameMetrics, ...problemResponses },
          summary: "The frame's CPU, memory, network, restarts and requests over a range",
          description:
            'One point per `step` in [`since`, `until`), oldest first, both aligned to the step; ' +
            "buckets follow the service's clock at the time the agent reported. Usage is summed " +
            'over replicas (each replica also on its own in `replicas`); a value is null where ' +
            'no sample was sent. Latency percentiles are read from the summed histogram of the ' +
            'edge. A range starting before the minute points are kept ' +
            '(METRICS_MINUTE_RETENTION_HOURS) is read from hour points; more than 1,500 points ' +
            'is 422 `too_many_points`.',
        },
      },
      async (req, reply) => {
        const { project_id, space_id, frame_id } = req.params;
        const actor = actorOf(req);
        const text = await frameMetrics.metrics(actor, project_id, space_id, frame_id, req.query);
        return jsonOrText(reply, text);
      },
    );
  };
}
