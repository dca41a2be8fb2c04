// GET /metrics on the service's own port, behind ADMIN_TOKEN like the operator API: the body
// tells how busy the service is and how many agents and hosts it has. A scraper on the
// operator's network without the token uses the METRICS_PORT listener (metrics-listener.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../http/schemas.ts';
import type { Metrics } from './metrics.ts';

export const MetricsText = Type.String({
  description:
    "Prometheus' text exposition format (version 0.0.4); docs/operations.md lists the families.",
});

export function metricsRoutes(
  metrics: Pick<Metrics, 'render' | 'contentType'>,
): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/metrics',
      {
        config: { auth: 'admin' },
        schema: {
          tags: ['operator'],
          summary: "The service's own metrics, in Prometheus' text format",
          produces: ['text/plain'],
          response: { 200: MetricsText, ...problemResponses },
        },
      },
      async (_req, reply) =>
        reply
          .header('cache-control', 'no-store')
          .type(metrics.contentType)
          .send(await metrics.render()),
    );
  };
}
