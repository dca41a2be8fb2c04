// How a failure reads on stderr. The service's problem is shown as it answered (detail, then
// status and code), except where its words are the API's rather than the user's: a refused
// token (the API says "send Authorization: Bearer") and no answer at all (fetch says "fetch
// failed"). The exit code is exitCodeOf's either way.
import { FrameplaneError } from '../sdk/index.ts';
import { configPath } from './config.ts';
import { type GlobalOptions, NOT_LOGGED_IN, serverOf } from './context.ts';
import { CliError } from './exit-codes.ts';

const POINT_ELSEWHERE =
  'To use another server: --server URL or FRAMEPLANE_SERVER=URL ' +
  '(`frameplane login --server URL` saves it).';

/** Why no answer came, by the code of the error under fetch's "fetch failed": what, and a hint. */
const REASONS: Record<string, [string, string?]> = {
  ECONNREFUSED: ['nothing is listening there', 'is the service running, on that port?'],
  ENOTFOUND: ['the host is unknown', 'check its spelling'],
  EAI_AGAIN: ['the host name could not be looked up', 'DNS did not answer; check the network'],
  ETIMEDOUT: ['the connection timed out', 'a firewall, or the wrong address?'],
  UND_ERR_CONNECT_TIMEOUT: ['the connection timed out', 'a firewall, or the wrong address?'],
  UND_ERR_HEADERS_TIMEOUT: ['it took the connection but did not answer in time'],
  EHOSTUNREACH: ['there is no route to that host'],
  ENETUNREACH: ['there is no route to that network'],
  ECONNRESET: ['it closed the connection without an answer', 'http:// to an HTTPS port?'],
  UND_ERR_SOCKET: ['it closed the connection without an answer', 'http:// to an HTTPS port?'],
  EPROTO: ['the TLS handshake failed', 'https:// to a plain HTTP port?'],
  ERR_SSL_WRONG_VERSION_NUMBER: ['the TLS handshake failed', 'https:// to a plain HTTP port?'],
};

/** fetch's error and what lies under it (`cause`, and each of an AggregateError's `errors`). */
function chain(err: unknown): Array<Error & { code?: string }> {
  if (!(err instanceof Error)) return [];
  const inner = err instanceof AggregateError ? err.errors.flatMap(chain) : [];
  return [err, ...chain(err.cause), ...inner];
}

/** Why a request to the service got no answer, in words. */
export function unreachableReason(err: unknown): string {
  const errors = chain(err);
  for (const { code } of errors) {
    const reason = code ? REASONS[code] : undefined;
    if (reason) return `${reason[0]} (${code})${reason[1] ? `: ${reason[1]}` : ''}`;
    if (code && /CERT|SIGNATURE/.test(code))
      return `its TLS certificate was not accepted (${code}): NODE_EXTRA_CA_CERTS adds a CA`;
  }
  const deepest = errors.at(-1)?.message ?? String(err);
  // fetch refuses the ports browsers block (1, 25, 6000…) before it connects.
  if (deepest === 'bad port') return 'fetch refuses that port, as browsers do: use another';
  return deepest;
}

/** Where the server came from: the variable, the option or the saved login. */
function serverSource(opts: GlobalOptions): string {
  // The option reads the variable too (main.ts): equal values mean the variable.
  const env = process.env.FRAMEPLANE_SERVER;
  if (env && opts.server === env) return 'FRAMEPLANE_SERVER';
  if (opts.server) return '--server';
  return `the login saved in ${configPath()}`;
}

function tokenSource(opts: GlobalOptions): string | undefined {
  if (opts.token) return 'the token given with --token was refused';
  if (process.env.FRAMEPLANE_TOKEN) return 'the token in FRAMEPLANE_TOKEN was refused';
  return undefined;
}

/** The lines to print for `err` (each is prefixed with "frameplane: " or indented). */
export function describe(err: unknown, opts: GlobalOptions): string[] {
  if (err instanceof FrameplaneError && err.status === 0 && err.code === 'unreachable') {
    let server = err.detail;
    try {
      server = serverOf(opts) ?? server;
    } catch {}
    return [
      `cannot reach the server ${server}: ${unreachableReason(err.cause)}`,
      `  That server comes from ${serverSource(opts)}. ${POINT_ELSEWHERE}`,
    ];
  }
  const refused = ['unauthorized', 'malformed_authorization'];
  if (err instanceof FrameplaneError && err.status === 401 && refused.includes(err.code)) {
    const why = tokenSource(opts);
    return [why ? `${NOT_LOGGED_IN} (${why}).` : `${NOT_LOGGED_IN}.`];
  }
  if (err instanceof FrameplaneError)
    return [
      `${err.detail} (${err.status || 'no answer'} ${err.code})`,
      ...err.errors.map((e) => `  ${e.path || '(body)'}: ${e.message}`),
    ];
  if (err instanceof CliError) return [err.message];
  return [String((err as Error)?.stack ?? err)];
}

export function report(err: unknown, opts: GlobalOptions) {
  const [first, ...rest] = describe(err, opts);
  process.stderr.write(`frameplane: ${first}\n`);
  for (const line of rest) process.stderr.write(`${line}\n`);
}
