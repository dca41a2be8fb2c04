// Reads the variables of CONTRACT section 0 (and our own tuning knobs) once, at start-up.
import { resolve } from 'node:path';
import { isIP } from 'node:net';
import { totalmem } from 'node:os';
import { SettingError } from './start-failure.ts';

export interface RateLimits {
  failedLoginsPerAddress: number; // per LOGIN_WINDOW
  failedLoginsPerIp: number;
  loginWindowSeconds: number;
  signupsPerIp: number; // per hour
  acceptsPerIp: number; // per hour
  invitationEmailsPerTeam: number; // per hour, resends included
  invitationEmailsPerAddress: number; // per 24 hours, across all teams
  verificationEmailsPerAddress: number; // per hour, resends and sign-ups waiting for proof
}

export interface Config {
  port: number;
  host: string;
  /** METRICS_PORT: a listener on HOST serving GET /metrics without a token; none when unset. */
  metricsPort: number | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  publicUrl: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  adminToken: string | undefined;
  secretKey: string | undefined;
  signup: 'open' | 'closed';
  agentOfflineAfterSeconds: number;
  cloudAgent: 'builtin' | 'none';
  /** What the built-in cloud's frames do when the service stops (cloud/frames-on-exit.ts). */
  framesOnExit: FramesOnExit;
  testClock: boolean;
  /** MEMO=off: nothing is remembered between requests (memo.ts); every answer is read anew. */
  memo: 'on' | 'off';
  logLevel: string;
  /** LOG_FORMAT: JSON lines, pretty lines, or pretty only when stdout is a terminal. */
  logFormat: 'auto' | 'json' | 'pretty';
  bodyLimitBytes: number;
  databasePoolSize: number;
  /** shared_buffers of the embedded PostgreSQL, in MB (unused with DATABASE_URL). */
  embeddedSharedBuffersMb: number;
  /** Longest a statement may run; a database that does not answer at all fails a little later. */
  databaseTimeoutMs: number;
  rateLimits: RateLimits;
  /** Fastify's `trustProxy`: whose X-Forwarded-For to believe when deciding a client's IP. */
  trustProxy: TrustProxy;
  growth: GrowthLimits;
  /** The domain under which every frame has its own hostname (CONTRACT 5b). */
  appsDomain: string;
  /** Where the built-in cloud's agent serves its edge (its EDGE_HTTP_PORT). */
  edgeHttpPort: number;
  /** Where an edge with TLS serves HTTPS: only with `acme` (the built-in cloud's agent). */
  edgeHttpsPort: number;
  /** The ACME server that issues the edges' certificates; none: the edges serve HTTP only. */
  acme: AcmeSettings | undefined;
  /** The resolvers that domain verification asks (DNS_SERVERS); none: the system's. */
  dnsServers: string[] | undefined;
  /** Outgoing notification webhooks: where they may go, and how long a try may take. */
  notifications: NotificationSettings;
}

export interface NotificationSettings {
  /** NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: loopback, private and link-local receivers too. */
  allowPrivateAddresses: boolean;
  /** NOTIFICATIONS_ALLOW_HTTP: plain http:// endpoints too (otherwise https:// only). */
  allowHttp: boolean;
  /** NOTIFICATIONS_TIMEOUT_SECONDS: the longest one try may take, answer included. */
  timeoutMs: number;
}

export interface AcmeSettings {
  directoryUrl: string;
  /** The account's contact, if any (Let's Encrypt writes to it before a certificate expires). */
  email: string | undefined;
}

type Env = Record<string, string | undefined>;

export const FRAMES_ON_EXIT = ['auto', 'stop', 'keep'] as const;
export type FramesOnExit = (typeof FRAMES_ON_EXIT)[number];

/**
 * The embedded PostgreSQL's cache of table and index pages: an eighth of the machine's memory,
 * from PostgreSQL's own default of 128 MB up to 1 GB. At 128 MB, a database of some 500 MB read
 * at random (the bench's large dataset) copied a page in from the OS for one read in twenty; the
 * embedded server shares its machine with the service and the frames, so not the quarter that
 * PostgreSQL's docs suggest for a server of its own. Memory is taken only as pages are read.
 */
export function defaultSharedBuffersMb(totalBytes = totalmem()) {
  return Math.min(1024, Math.max(128, Math.floor(totalBytes / 8 / 2 ** 20)));
}

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new SettingError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T))
    throw new SettingError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

// Names proxy-addr (Fastify's trustProxy) understands besides addresses and CIDRs.
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function proxyEntryOk(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  const slash = entry.indexOf('/');
  if (slash < 0) return isIP(entry) !== 0;
  const addr = entry.slice(0, slash);
  const bits = entry.slice(slash + 1);
  const family = isIP(addr);
  if (family === 0) return false;
  if (/^\d+$/.test(bits)) return Number(bits) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(bits) === 4; // 10.0.0.0/255.0.0.0
}

export type TrustProxy = boolean | string[] | ((address: string, hop: number) => boolean);

/** TRUST_PROXY: false (default), true, a number of hops, or a comma-separated list of proxy
 *  addresses/CIDRs, as Fastify's `trustProxy` takes it. Fastify 5 ignores a bare number (it
 *  cannot check the peer), so a hop count becomes the function Express uses: the peer and the
 *  next `hops - 1` forwarders are believed. */
export function trustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  const usage =
    'TRUST_PROXY must be "false", "true", a number of proxy hops (e.g. 1), or a comma-separated list ' +
    'of proxy addresses or CIDRs (e.g. 10.0.0.5,10.1.0.0/16)';
  if (value === '' || value.toLowerCase() === 'false') return false;
  if (value.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (!Number.isSafeInteger(hops)) throw new SettingError(`${usage}, got "${raw}"`);
    if (hops === 0) return false;
    return Object.defineProperty((_address: string, hop: number) => hop < hops, 'name', {
      value: `trust${hops}Hops`,
    });
  }
  const entries = value.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !proxyEntryOk(e));
  if (bad.length) {
    throw new SettingError(
      `${usage}, got "${raw}": ${bad.map((b) => (b === '' ? 'an empty entry' : `"${b}"`)).join(', ')} ${bad.length > 1 ? 'are not addresses or CIDRs' : 'is not an address or CIDR'}`,
    );
  }
  return entries;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    metricsPort: metricsPort(env, port),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    dataDir: resolve(env.DATA_DIR || './data'),
    publicUrl: (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Frameplane <no-reply@localhost>',
    adminToken: env.ADMIN_TOKEN || undefined,
    secretKey: env.SECRET_KEY || undefined,
    signup: oneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'open'),
    memo: oneOf(env, 'MEMO', ['on', 'off'] as const, 'on'),
    agentOfflineAfterSeconds: int(env, 'AGENT_OFFLINE_AFTER_SECONDS', 30, 1),
    cloudAgent: oneOf(env, 'CLOUD_AGENT', ['builtin', 'none'] as const, 'builtin'),
    framesOnExit: oneOf(env, 'FRAMES_ON_EXIT', FRAMES_ON_EXIT, 'auto'),
    testClock: env.TEST_CLOCK === '1',
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: oneOf(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 20, 1),
    embeddedSharedBuffersMb: int(env, 'EMBEDDED_SHARED_BUFFERS_MB', defaultSharedBuffersMb(), 16),
    databaseTimeoutMs: int(env, 'DATABASE_TIMEOUT_MS', 15_000, 100),
    trustProxy: trustProxy(env.TRUST_PROXY),
    rateLimits: {
      failedLoginsPerAddress: int(env, 'RATE_FAILED_LOGINS_PER_ADDRESS', 20, 1),
      failedLoginsPerIp: int(env, 'RATE_FAILED_LOGINS_PER_IP', 100, 1),
      loginWindowSeconds: int(env, 'RATE_LOGIN_WINDOW_SECONDS', 15 * 60, 1),
      signupsPerIp: int(env, 'RATE_SIGNUPS_PER_IP', 300, 1),
      acceptsPerIp: int(env, 'RATE_ACCEPTS_PER_IP', 300, 1),
      invitationEmailsPerTeam: int(env, 'RATE_INVITATION_EMAILS_PER_TEAM', 50, 1),
      invitationEmailsPerAddress: int(env, 'RATE_INVITATION_EMAILS_PER_ADDRESS', 10, 1),
      verificationEmailsPerAddress: int(env, 'RATE_VERIFICATION_EMAILS_PER_ADDRESS', 5, 1),
    },
    growth: growthLimits(env),
    ...edgeSettings(env, port),
    notifications: notificationSettings(env),
  };
}

/** A yes-or-no setting: true/1 or false/0. */
function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new SettingError(`${name} must be true or false, got "${env[name]}"`);
}

export function notificationSettings(env: Env): NotificationSettings {
  const timeout = int(env, 'NOTIFICATIONS_TIMEOUT_SECONDS', 10, 1);
  // A try holds its delivery's transaction open; the database ends one idle for 60 s.
  if (timeout > 50)
    throw new SettingError(`NOTIFICATIONS_TIMEOUT_SECONDS must be at most 50, got "${timeout}"`);
  return {
    allowPrivateAddresses: flag(env, 'NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES', false),
    allowHttp: flag(env, 'NOTIFICATIONS_ALLOW_HTTP', false),
    timeoutMs: timeout * 1000,
  };
}

/** DATABASE_URL, when set: a postgres:// URL (never echoed: it may hold a password). */
function databaseUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const protocol = URL.canParse(raw) ? new URL(raw).protocol : undefined;
  if (protocol !== 'postgres:' && protocol !== 'postgresql:')
    throw new SettingError(
      'DATABASE_URL must be a postgres:// URL, e.g. postgres://user:password@localhost:5432/frameplane (unset, Frameplane runs its own database)',
    );
  return raw;
}

/** METRICS_PORT: a port number other than PORT, or unset. */
function metricsPort(env: Env, servicePort: number): number | undefined {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return undefined;
  const port = portNumber(env, 'METRICS_PORT', 0);
  if (port === servicePort)
    throw new SettingError(
      `METRICS_PORT must differ from PORT (both ${port}): it serves the metrics without a token`,
    );
  return port;
}

function portNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new SettingError(`${name} must be a port number (1..65535), got "${raw}"`);
  return n;
}

/**
 * APPS_DOMAIN: a DNS name (`localhost` by default: browsers and curl resolve `*.localhost` to
 * loopback), any case, one trailing dot allowed; kept lower-cased without it. At most 205
 * characters, so that a frame's hostname (a label of up to 47 and a dot) fits DNS's 253.
 */
export function appsDomain(raw: string | undefined): string {
  const domain = (raw?.trim() || 'localhost').toLowerCase().replace(/\.$/, '');
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  const labels = domain.split('.');
  const ok =
    domain.length <= 205 &&
    labels.every((l) => label.test(l)) &&
    !/^[0-9]+$/.test(labels.at(-1) ?? '');
  if (!ok)
    throw new SettingError(
      'APPS_DOMAIN must be a DNS name of at most 205 characters (like apps.example.com): ' +
        `labels of a-z, 0-9 and "-", the last not all digits, got "${raw}"`,
    );
  return domain;
}

function edgeSettings(env: Env, servicePort: number) {
  const edgeHttpPort = portNumber(env, 'EDGE_HTTP_PORT', 8000);
  const edgeHttpsPort = portNumber(env, 'EDGE_HTTPS_PORT', 443);
  // The built-in cloud's edge listens on the service's machine.
  if (edgeHttpPort === servicePort && env.CLOUD_AGENT !== 'none')
    throw new SettingError(
      `EDGE_HTTP_PORT must differ from PORT (both ${servicePort}): the built-in cloud's edge ` +
        'serves frames beside the service',
    );
  if (edgeHttpsPort === edgeHttpPort)
    throw new SettingError(
      `EDGE_HTTPS_PORT must differ from EDGE_HTTP_PORT (both ${edgeHttpPort})`,
    );
  return {
    appsDomain: appsDomain(env.APPS_DOMAIN),
    edgeHttpPort,
    edgeHttpsPort,
    acme: acmeSettings(env),
    dnsServers: dnsServers(env.DNS_SERVERS),
  };
}

/** DNS_SERVERS: comma-separated `ip`, `ip:port` or `[ipv6]:port`, as Node's resolver takes them. */
export function dnsServers(raw: string | undefined): string[] | undefined {
  const list = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) return undefined;
  for (const s of list) {
    const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(s);
    const ip = m?.[1] ?? (isIP(s) === 6 ? s : undefined);
    const port = m?.[2] === undefined ? 53 : Number(m[2]);
    if (!ip || !isIP(ip) || port < 1 || port > 65535)
      throw new SettingError(
        `DNS_SERVERS must list ip[:port] addresses, comma-separated, got "${s}"`,
      );
  }
  return list;
}

/** ACME_DIRECTORY_URL (an https URL) and ACME_EMAIL; neither set: no TLS. */
export function acmeSettings(env: Env): AcmeSettings | undefined {
  const raw = env.ACME_DIRECTORY_URL?.trim();
  const email = env.ACME_EMAIL?.trim() || undefined;
  if (!raw) {
    if (email) throw new SettingError('ACME_EMAIL is set without ACME_DIRECTORY_URL');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingError(`ACME_DIRECTORY_URL must be a URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:')
    throw new SettingError(`ACME_DIRECTORY_URL must be an https URL (RFC 8555), got "${raw}"`);
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
    throw new SettingError(`ACME_EMAIL must be an e-mail address, got "${email}"`);
  return { directoryUrl: url.toString(), email };
}

/** What a frame may keep and an instance may remember (docs/api.md, "Bounded growth"). */
export interface GrowthLimits {
  /** UTF-8 bytes of a frame's env vars, keys and values together. */
  envMaxBytes: number;
  /** Deployments kept per frame; the serving, latest and in-progress ones are never pruned. */
  deploymentHistory: number;
  /** Releases per frame whose builds the agents keep, to roll back to (issue 36). */
  releasesKept: number;
  /** Decrypted deployment env the agent sync keeps in memory, per instance. */
  envCacheMaxBytes: number;
  /** What the sweeper keeps of each frame's log lines: the newest, within all three bounds. */
  logRetention: LogRetention;
  /** How long the sweeper keeps frame metrics' minute and hour points. */
  metricsRetention: MetricsRetention;
}

export interface MetricsRetention {
  /** METRICS_MINUTE_RETENTION_HOURS: minute points, then only hour points. */
  minuteHours: number;
  /** METRICS_HOUR_RETENTION_DAYS: hour points. */
  hourDays: number;
}

export interface LogRetention {
  days: number;
  linesPerFrame: number;
  /** UTF-8 bytes of a frame's lines. */
  bytesPerFrame: number;
}

export function growthLimits(env: Env): GrowthLimits {
  return {
    envMaxBytes: int(env, 'ENV_MAX_BYTES', 64 * 1024, 1024),
    deploymentHistory: int(env, 'DEPLOYMENT_HISTORY', 50, 1),
    releasesKept: int(env, 'RELEASES_KEPT', 5, 1),
    envCacheMaxBytes: int(env, 'ENV_CACHE_MAX_BYTES', 32 * 1024 * 1024, 1024 * 1024),
    logRetention: {
      days: int(env, 'LOG_RETENTION_DAYS', 7, 1),
      linesPerFrame: int(env, 'LOG_RETENTION_LINES_PER_FRAME', 10_000, 100),
      bytesPerFrame: int(env, 'LOG_RETENTION_BYTES_PER_FRAME', 8 * 1024 * 1024, 64 * 1024),
    },
    metricsRetention: {
      minuteHours: int(env, 'METRICS_MINUTE_RETENTION_HOURS', 24, 1),
      hourDays: int(env, 'METRICS_HOUR_RETENTION_DAYS', 30, 1),
    },
  };
}
