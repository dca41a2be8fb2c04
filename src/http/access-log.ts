// One access-log line per request, at a level that keeps the log for people.
// Machines that call all the time get theirs at debug while they succeed: an agent's sync (a
// long poll, every few seconds per agent, was a third of the log) and the health probes of a
// load balancer. Their failures (4xx and 5xx) stay at info, with everyone else's; 5xx also log
// `request failed` at warn or error from the error handler. Health probes are debug whatever
// their answer: a 503 of /readyz is the probe's own signal, and its cause is logged where it
// happens (the database unreachable, start-up not finished).
import type { FastifyInstance } from 'fastify';

const PROBES = new Set(['/healthz', '/readyz']);
const FREQUENT = new Set(['/v2/agent/sync']);

export function accessLogLevel(route: string | undefined, status: number): 'debug' | 'info' {
  if (route && PROBES.has(route)) return 'debug';
  if (route && FREQUENT.has(route) && status < 400) return 'debug';
  return 'info';
}

export function installAccessLog(app: FastifyInstance) {
  // Synchronous: nothing here waits, so no promise per request.
  app.addHook('onResponse', (req, reply, done) => {
    const level = accessLogLevel(req.routeOptions.url, reply.statusCode);
    const ms = Math.round(reply.elapsedTime);
    req.log[level]({ method: req.method, url: req.url, status: reply.statusCode, ms }, 'request');
    done();
  });
}
