// What a person starting the service is told when the start fails for a reason they can fix:
// one line naming the setting and what is wrong with it, instead of a JSON stack trace. A
// failure not listed here is a fault of ours, and keeps its stack (main.ts).

/** Thrown for a setting that cannot be used as it is (config.ts). */
export class SettingError extends Error {
  override name = 'SettingError';
}

interface Failure {
  code?: string;
  syscall?: string;
  address?: string;
  port?: number;
  hostname?: string;
  message?: string;
}

export interface StartContext {
  /** PORT and HOST as configured. */
  port: number;
  host: string;
  /** DATABASE_URL when set; the embedded database otherwise. */
  databaseUrl?: string | undefined;
}

/** Where DATABASE_URL points, without its user or password. */
function databaseTarget(url: string | undefined) {
  if (!url || !URL.canParse(url)) return 'the database';
  const u = new URL(url);
  return `${decodeURIComponent(u.hostname)}:${u.port || 5432}${u.pathname}`;
}

/** PostgreSQL's and Node.js's connection failures, as a person would say them. */
const DATABASE_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'nothing answers there (connection refused)',
  ENOTFOUND: 'that host name is unknown',
  EAI_AGAIN: 'that host name could not be looked up',
  ETIMEDOUT: 'it did not answer in time',
  EHOSTUNREACH: 'that host cannot be reached',
  '28P01': 'the password was refused',
  '28000': 'that user may not connect',
  '3D000': 'that database does not exist',
};

/** The one line to print, or undefined when the failure is not one a setting explains. */
export function startFailureLine(err: unknown, ctx: StartContext): string | undefined {
  if (err instanceof SettingError) return err.message;
  const e = (err ?? {}) as Failure;
  if (e.syscall === 'listen' || e.code === 'EADDRINUSE') {
    const where = `${ctx.host}:${ctx.port}`;
    if (e.code === 'EADDRINUSE')
      return `port ${ctx.port} on ${ctx.host} is in use by another program; set PORT to a free port`;
    if (e.code === 'EACCES')
      return `port ${ctx.port} needs privileges this user does not have; set PORT to one above 1023`;
    if (e.code === 'EADDRNOTAVAIL')
      return `${ctx.host} is not an address of this machine (${where}); set HOST, e.g. 127.0.0.1`;
  }
  const reason = e.code ? DATABASE_FAILURES[e.code] : undefined;
  if (reason && ctx.databaseUrl)
    return `DATABASE_URL: cannot connect to ${databaseTarget(ctx.databaseUrl)}: ${reason}`;
  return undefined;
}
