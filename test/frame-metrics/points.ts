// A metrics answer's points as objects, from the steps the service builds: what the service
// sends as text (closed-steps.ts), made the plain way, for the tests to compare with.
import {
  buildSteps,
  type ReplicaSums,
  type RequestSums,
  replicaPoint,
  replicasOf,
} from '../../src/frame-metrics/metrics-points.ts';
import type { Range } from '../../src/frame-metrics/metrics-range.ts';

/** The answer's points (and each replica's), one per step of the range, oldest first. */
export function buildPoints(range: Range, replicaRows: ReplicaSums[], requestRows: RequestSums[]) {
  const steps = buildSteps(range, replicaRows, requestRows);
  const replicas = replicasOf(steps).map((replica) => ({
    replica,
    points: steps.map((s) => s.replicas.get(replica) ?? replicaPoint(s.point.at, undefined)),
  }));
  return { points: steps.map((s) => s.point), replicas };
}
