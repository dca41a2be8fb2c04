// The HAProxy plane's configuration (haproxy.cfg), written once at start: everything that
// changes (which host goes where, the replicas of each frame) changes through the Runtime API
// (plane.ts), never by a reload, so no connection is ever dropped for a route change. HAProxy
// 2.6 cannot add a backend at run time: the config holds a pool of empty ones ("slots"), and
// each frame takes one; its replicas are its servers. A host is a map entry, to its
// frame's slot or to the backend of the page that says why it does not answer. Pure.
import { CHALLENGE_PREFIX } from '../acme-answers.ts';
import { page, rawPage, RETRY_AFTER_SECONDS, type EdgePage } from '../pages.ts';
import { LOG_FORMAT } from './access-log.ts';

export interface HaproxyConfig {
  /** Where the config, the pages, the map and the admin socket live (the agent's, 0700). */
  dir: string;
  host: string;
  httpPort: number;
  /** HTTPS on this port too, with the certificates the agent adds at run time. */
  httpsPort?: number;
  slots: number;
  maxBodyBytes: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * Servers declared in each slot, spare until the agent sets one's address (`set server addr`).
 * HAProxy 2.6 keeps no idle connection to a server made by `add server`: through one, each
 * request opened a connection to the app, which halved the plane's throughput (bench:edge).
 * Replicas beyond these, and Unix sockets (which `set server addr` cannot take), are added so.
 * Four cover two replicas and two more draining during a deploy; a thousand slots of four cost
 * HAProxy about 22 MB.
 */
export const SERVERS_PER_SLOT = 4;
export const templateServer = (i: number) => `r${i + 1}`;
export const isTemplateServer = (name: string) => /^r\d+$/.test(name);
export const MAP = 'hosts.map';
/** Hosts with a certificate: plain HTTP redirects them to HTTPS. */
export const TLS_MAP = 'tls-hosts.map';
export const CRT_LIST = 'certificates.list';
/** Where the agent answers the ACME challenges HAProxy passes it. */
export const ACME_SOCKET = 'acme.sock';
export const SOCKET = 'admin.sock';
/** The named pipe of HAProxy's access lines, which the agent reads (access-follow.ts). */
export const ACCESS_PIPE = 'access.pipe';
export const slotName = (i: number) => `slot_${i}`;
export const pageBackend = (kind: EdgePage) => `page_${kind}`;

/** The pages a host may answer with; the others (502, 504, 400, 413) are HAProxy's errorfiles. */
const ROUTE_PAGES: EdgePage[] = ['unknown_host', 'stopped', 'suspended', 'starting'];
const ERROR_PAGES: Array<[number, EdgePage]> = [
  [400, 'bad_request'],
  [413, 'too_large'],
  [502, 'bad_gateway'],
  [503, 'bad_gateway'],
  [504, 'gateway_timeout'],
];

/** The files the config names, by file name: the pages' bodies and HAProxy's errorfiles. */
export function pageFiles(): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (const kind of ROUTE_PAGES) files[`${kind}.html`] = page(kind).body;
  for (const [status, kind] of ERROR_PAGES) {
    const p = page(kind);
    files[`${status}.http`] = rawPage({ ...p, status });
  }
  return files;
}

function pageBackendLines(dir: string, kind: EdgePage) {
  const p = page(kind);
  const headers = ['cache-control no-store', 'x-content-type-options nosniff'];
  headers.push(`x-frameplane-edge ${kind}`);
  if (kind === 'starting') headers.push(`retry-after ${RETRY_AFTER_SECONDS}`);
  return [
    `backend ${pageBackend(kind)}`,
    `  http-request return status ${p.status} content-type "text/html; charset=utf-8" ` +
      `file ${dir}/${kind}.html ${headers.map((h) => `hdr ${h}`).join(' ')}`,
  ];
}

/** What both frontends do with a request before routing it by its Host. */
function requestRules(c: HaproxyConfig, proto: 'http' | 'https') {
  return [
    // Ambiguous requests are refused, not forwarded (request smuggling). One with both
    // Content-Length and Transfer-Encoding never reaches a rule: HAProxy's parser drops the
    // first and closes the connection after the answer (RFC 9112 6.1).
    '  http-request deny deny_status 400 if { req.hdr_cnt(host) gt 1 }',
    `  http-request deny deny_status 413 if { req.hdr(content-length) -m int gt ${c.maxBodyBytes} }`,
    // The table's key: lower case, no port, no trailing dot (edge/table.ts, normalizeHost);
    // each rule costs every request something, so the rare trailing dot alone takes a regex.
    '  http-request set-var(txn.host) req.hdr(host),lower,word(1,:)',
    '  http-request set-var(txn.host) var(txn.host),regsub(\\.+$,) if { var(txn.host) -m end . }',
    // Set by the edge only: what a client sent is replaced.
    '  http-request set-header X-Forwarded-For %[src]',
    `  http-request set-header X-Forwarded-Proto ${proto}`,
    '  http-request set-header X-Forwarded-Host %[req.hdr(host)]',
  ];
}

function routing(c: HaproxyConfig) {
  const host = 'var(txn.host)';
  const map = `${c.dir}/${MAP}`;
  // One look-up: a host the map does not hold goes to the unknown host's page.
  const unknown = pageBackend('unknown_host');
  return [`  use_backend %[${host},map(${map},${unknown})]`, `  default_backend ${unknown}`];
}

/** With HTTPS: plain HTTP answers the ACME server's challenges (through the agent, acme.ts)
 *  and sends every other request for a host with a certificate there (308, method kept). */
function toHttps(c: HaproxyConfig, httpsPort: number) {
  const port = httpsPort === 443 ? '' : `:${httpsPort}`;
  const held = `{ var(txn.host),map(${c.dir}/${TLS_MAP}) -m found }`;
  return [
    `  acl challenge path_beg ${CHALLENGE_PREFIX}`,
    `  http-request redirect location https://%[var(txn.host)]${port}%[pathq] code 308 ` +
      `if !challenge ${held}`,
    '  use_backend acme if challenge',
  ];
}

function httpsFrontend(c: HaproxyConfig, httpsPort: number) {
  // No certificate at start: they are all added at run time, and a name without one gets no
  // handshake (strict-sni), as on the built-in plane.
  return [
    'frontend https',
    `  bind ${c.host}:${httpsPort} ssl crt-list ${c.dir}/${CRT_LIST} strict-sni alpn h2,http/1.1`,
    ...requestRules(c, 'https'),
    ...routing(c),
    '',
    'backend acme',
    `  server agent unix@${c.dir}/${ACME_SOCKET}`,
    '',
  ];
}

export function renderConfig(c: HaproxyConfig): string {
  const lines = [
    'global',
    `  stats socket ${c.dir}/${SOCKET} mode 600 level admin`,
    '  maxconn 8000',
    // One short line per request into the pipe the agent gave as fd 3 (access-follow.ts): the
    // edge's counts per frame. Written without blocking: dropped, never waited for.
    '  log fd@3 format raw local0',
    '',
    'defaults',
    '  mode http',
    '  log global',
    `  log-format "${LOG_FORMAT}"`,
    // A connection that sent no request (a port check) is no request.
    '  option dontlognull',
    '  option http-keep-alive',
    '  option redispatch',
    // A replica that refuses the connection (gone between two health checks) costs nothing:
    // the connection is tried again, on another replica. Not `retry-on` (layer-7 retries):
    // it keeps a copy of every request, about 5 % of the plane's throughput, and an app that
    // closed a kept-alive connection under a request failed none without it (measured at
    // 50 ms keep-alive, 64 clients, 19,000 requests).
    '  retries 3',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 120s',
    `  timeout http-request ${Math.ceil(c.headersTimeoutMs / 1000)}s`,
    `  timeout http-keep-alive ${Math.ceil(c.keepAliveTimeoutMs / 1000)}s`,
    '  timeout tunnel 1h',
    ...ERROR_PAGES.map(([status]) => `  errorfile ${status} ${c.dir}/${status}.http`),
    '',
    'frontend http',
    `  bind ${c.host}:${c.httpPort}`,
    ...requestRules(c, 'http'),
    ...(c.httpsPort === undefined ? [] : toHttps(c, c.httpsPort)),
    ...routing(c),
    '',
    ...(c.httpsPort === undefined ? [] : httpsFrontend(c, c.httpsPort)),
    ...ROUTE_PAGES.flatMap((kind) => [...pageBackendLines(c.dir, kind), '']),
  ];
  for (let i = 0; i < c.slots; i++)
    lines.push(
      `backend ${slotName(i)}`,
      '  balance roundrobin',
      `  server-template r 1-${SERVERS_PER_SLOT} 127.0.0.1:1 disabled`,
    );
  return `${lines.join('\n')}\n`;
}
