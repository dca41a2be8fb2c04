// Schemas of a frame's metrics (issue 39): the usage its agent reads from the runtime and the
// requests its edge answered, as points of one step over a range (docs/api.md, Frame metrics).
import { Type } from 'typebox';
import { Nullable, Timestamp } from '../http/schemas.ts';

export const MetricsQuery = Type.Object({
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'RFC 3339: the start of the range; `until` − 1 h when absent',
    }),
  ),
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "RFC 3339: the end of the range (excluded); the service's now when absent",
    }),
  ),
  step: Type.Optional(
    Type.Integer({
      minimum: 60,
      maximum: 86400,
      multipleOf: 60,
      description:
        'Seconds a point covers, a multiple of 60 (of 3600 for a range answered from hourly ' +
        'points); when absent the smallest of 60, 300, 900, 3600, 21600 giving at most 360 points',
    }),
  ),
});

const rate = (description: string) => Nullable(Type.Number({ minimum: 0, description }));
const bytes = (description: string) => Nullable(Type.Integer({ minimum: 0, description }));
const Count = Type.Integer({ minimum: 0 });

const usage = {
  at: { ...Timestamp, description: "The start of the point's step" },
  cpu_cores: rate('CPU seconds used per second; null without a sample'),
  memory_bytes: bytes('The highest memory use sampled in the step; null without a sample'),
  memory_limit_bytes: bytes('The memory limit; null when none was reported'),
};

export const MetricsPoint = Type.Object(
  {
    ...usage,
    cpu_cores: rate('Summed over replicas: CPU seconds used per second; null without a sample'),
    memory_bytes: bytes(
      "Summed over replicas: each one's highest memory use in the step; null without a sample",
    ),
    memory_limit_bytes: bytes('Summed over replicas; null when none was reported'),
    net_rx_bytes_per_second: rate('Summed over replicas; null when none was reported'),
    net_tx_bytes_per_second: rate('Summed over replicas; null when none was reported'),
    restarts: Count,
    requests: { ...Count, description: 'Requests the edge answered, every status class' },
    status: Type.Object({
      '1xx': Count,
      '2xx': Count,
      '3xx': Count,
      '4xx': Count,
      '5xx': Count,
    }),
    latency_ms: Type.Unsafe<{ p50: number; p95: number; p99: number } | null>({
      type: ['object', 'null'],
      properties: {
        p50: { type: 'number', minimum: 0 },
        p95: { type: 'number', minimum: 0 },
        p99: { type: 'number', minimum: 0 },
      },
      required: ['p50', 'p95', 'p99'],
      additionalProperties: false,
      description: "Read from the edge's latency histogram; null without requests",
    }),
  },
  { title: 'MetricsPoint' },
);

export const ReplicaMetricsPoint = Type.Object(usage, { title: 'ReplicaMetricsPoint' });

export const FrameMetrics = Type.Object(
  {
    frame_id: Type.String(),
    since: { ...Timestamp, description: 'The start of the first point' },
    until: { ...Timestamp, description: 'The end of the last point' },
    step: Type.Integer({ description: 'Seconds each point covers' }),
    points: Type.Array(MetricsPoint, {
      description: 'One per step in [since, until), oldest first',
    }),
    replicas: Type.Array(
      Type.Object({
        replica: Type.Integer({ minimum: 0 }),
        points: Type.Array(ReplicaMetricsPoint, { description: 'As `points`, one replica' }),
      }),
      { description: 'Each replica that reported in the range, by number' },
    ),
  },
  { title: 'FrameMetrics' },
);
