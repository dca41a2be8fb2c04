// Reads the variables of CONTRACT section 0 (and our own tuning knobs) once, at start-up.
import { resolve } from 'node:path';

export interface RateLimits {
  failedLoginsPerAddress: number; // per LOGIN_WINDOW
  failedLoginsPerIp: number;
  loginWindowSeconds: number;
  signupsPerIp: number; // per hour
  acceptsPerIp: number; // per hour
}

export interface Config {
  port: number;
  host: string;
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
  testClock: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  databasePoolSize: number;
  /** Longest a statement may run; a database that does not answer at all fails a little later. */
  databaseTimeoutMs: number;
  rateLimits: RateLimits;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    publicUrl: (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'Frameplane <no-reply@localhost>',
    adminToken: env.ADMIN_TOKEN || undefined,
    secretKey: env.SECRET_KEY || undefined,
    signup: oneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'open'),
    agentOfflineAfterSeconds: int(env, 'AGENT_OFFLINE_AFTER_SECONDS', 30, 1),
    cloudAgent: oneOf(env, 'CLOUD_AGENT', ['builtin', 'none'] as const, 'builtin'),
    testClock: env.TEST_CLOCK === '1',
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 20, 1),
    databaseTimeoutMs: int(env, 'DATABASE_TIMEOUT_MS', 15_000, 100),
    rateLimits: {
      failedLoginsPerAddress: int(env, 'RATE_FAILED_LOGINS_PER_ADDRESS', 20, 1),
      failedLoginsPerIp: int(env, 'RATE_FAILED_LOGINS_PER_IP', 100, 1),
      loginWindowSeconds: int(env, 'RATE_LOGIN_WINDOW_SECONDS', 15 * 60, 1),
      signupsPerIp: int(env, 'RATE_SIGNUPS_PER_IP', 300, 1),
      acceptsPerIp: int(env, 'RATE_ACCEPTS_PER_IP', 300, 1),
    },
  };
}
