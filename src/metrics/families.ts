// The metric families of the service, in a registry of its own (not prom-client's global one:
// each app, and each test's app, counts apart), beside the process's (processMetrics). Label values are always from a fixed set:
// route templates, methods, classes of status, kinds and states named here, never an id, a
// hostname or a raw path. docs/operations.md ("Metrics") lists them for the operator.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; up to 30 for the agent sync's long poll, which holds a request that long. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/**
 * Node's and the process's own (memory, CPU, event loop lag, GC), under their usual names
 * (process_*, nodejs_*): the dashboards made for Node services read them so. One registry per
 * process, made on first use: they describe the process, however many apps it builds (tests
 * build several), and each collection watches GC and the event loop for as long as it lives.
 */
export function processMetrics(): Registry {
  if (processRegistry) return processRegistry;
  processRegistry = new Registry();
  collectDefaultMetrics({ register: processRegistry });
  // Gauges named like counters (promtool rejects them); each is the sum of the family of the
  // same name without `_total`, by type, which stays.
  for (const name of ['handles', 'requests', 'resources'])
    processRegistry.removeSingleMetric(`nodejs_active_${name}_total`);
  return processRegistry;
}

/** The service's own families, in a registry of this app's. */
export function metricFamilies() {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    requestDuration: new Histogram({
      name: 'frameplane_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route template, method and class of status.',
      labelNames: ['route', 'method', 'status_class'] as const,
      buckets: DURATION_BUCKETS,
      registers,
    }),
    poolConnections: new Gauge({
      name: 'frameplane_db_pool_connections',
      help: 'Open connections of a PostgreSQL pool, idle or in use.',
      labelNames: ['pool', 'state'] as const,
      registers,
    }),
    poolMax: new Gauge({
      name: 'frameplane_db_pool_max_connections',
      help: 'Connections a PostgreSQL pool may open.',
      labelNames: ['pool'] as const,
      registers,
    }),
    poolWaiting: new Gauge({
      name: 'frameplane_db_pool_waiting_requests',
      help: 'Requests for a connection waiting because every connection of the pool is in use.',
      labelNames: ['pool'] as const,
      registers,
    }),
    queueJobs: new Gauge({
      name: 'frameplane_job_queue_jobs',
      help: 'Jobs in the queue: ready to run, scheduled later, locked by a worker, given up.',
      labelNames: ['state'] as const,
      registers,
    }),
    jobAttemptsFailed: new Counter({
      name: 'frameplane_job_attempts_failed_total',
      help: 'Attempts of a job that threw; the job is retried until it is given up.',
      labelNames: ['task'] as const,
      registers,
    }),
    jobsFailed: new Counter({
      name: 'frameplane_jobs_failed_total',
      help: 'Jobs given up after their last attempt failed.',
      labelNames: ['task'] as const,
      registers,
    }),
    agents: new Gauge({
      name: 'frameplane_agents',
      help: 'Registered agents, by kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
    agentsOnline: new Gauge({
      name: 'frameplane_agents_online',
      help: 'Agents whose last call is at most AGENT_OFFLINE_AFTER_SECONDS old, by kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
    longPolls: new Gauge({
      name: 'frameplane_long_polls_held',
      help: "Requests held open now: agents' sync long polls and event streams.",
      labelNames: ['kind'] as const,
      registers,
    }),
    edgeRoutes: new Gauge({
      name: 'frameplane_edge_routes',
      help: "Hostnames routed by the agents' edges: frames' own hostnames and verified domains.",
      labelNames: ['kind'] as const,
      registers,
    }),
    certificates: new Gauge({
      name: 'frameplane_edge_certificates',
      help: "The edges' certificates by state: valid, expired, pending (none yet), failing.",
      labelNames: ['state'] as const,
      registers,
    }),
    earliestExpiry: new Gauge({
      name: 'frameplane_edge_certificate_earliest_expiry_timestamp_seconds',
      help: 'When the first certificate held expires (Unix time); absent when none is held.',
      registers,
    }),
    collectorUp: new Gauge({
      name: 'frameplane_metrics_collector_up',
      help: "Whether a scrape-time collector's last read succeeded (1) or failed (0).",
      labelNames: ['collector'] as const,
      registers,
    }),
    collectorErrors: new Counter({
      name: 'frameplane_metrics_collector_errors_total',
      help: 'Scrape-time reads that failed or ran past their bound, by collector.',
      labelNames: ['collector'] as const,
      registers,
    }),
  };
}

export type MetricFamilies = ReturnType<typeof metricFamilies>;
