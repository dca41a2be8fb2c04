// One try of a delivery: POST the body to the endpoint, after the address checks of
// address-policy.ts. The host is resolved once, every address it resolves to is checked (any
// refused one refuses the delivery), and the connection goes to the checked address itself
// (a `lookup` that answers only it), so a second resolution cannot point elsewhere (DNS
// rebinding). TLS still verifies the certificate for the URL's name (SNI and check alike).
// Redirects are not followed: a 3xx is a failed try, like any answer but a 2xx.
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { type AddressRules, addressRefusal, literalAddress, urlRefusal } from './address-policy.ts';

export interface Resolved {
  address: string;
  family: number;
}
/** Every address of a host name, as the system resolves it (tests give their own table). */
export type Resolve = (hostname: string) => Promise<Resolved[]>;
export const systemResolve: Resolve = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

export interface Outcome {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** The start of the answer's body, at most EXCERPT_BYTES of UTF-8. */
  excerpt: string | null;
  /** Why the try failed, in words; null when it succeeded. */
  error: string | null;
}

export const EXCERPT_BYTES = 1024;
const ERROR_CHARS = 500;

export interface SendOptions extends AddressRules {
  timeoutMs: number;
  resolve: Resolve;
}

/** At most EXCERPT_BYTES of UTF-8, cut between characters, without NUL (text columns refuse it). */
export function excerptOf(bytes: Buffer): string {
  let text = bytes.subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\0/g, '');
  while (Buffer.byteLength(text) > EXCERPT_BYTES) text = text.slice(0, -1);
  return text;
}

function describe(err: NodeJS.ErrnoException, target: string): string {
  const text =
    err.code === 'ECONNREFUSED'
      ? `Connection refused by ${target}`
      : err.code === 'ECONNRESET'
        ? `The connection to ${target} was reset`
        : `${err.code ? `${err.code}: ` : ''}${err.message}`;
  return text.slice(0, ERROR_CHARS);
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Sends `body` to `rawUrl` once; never throws: a refusal or a failure is an Outcome too. */
export async function post(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  o: SendOptions,
): Promise<Outcome> {
  const started = performance.now();
  const failed = (error: string): Outcome => ({
    ok: false,
    statusCode: null,
    latencyMs: Math.round(performance.now() - started),
    excerpt: null,
    error: error.slice(0, ERROR_CHARS),
  });
  const refused = urlRefusal(rawUrl, o);
  if (refused) return failed(`Refused: the URL ${refused}`);
  const url = new URL(rawUrl);
  const literal = literalAddress(url.hostname);
  let addresses: Resolved[];
  try {
    addresses = literal
      ? [{ address: literal, family: literal.includes(':') ? 6 : 4 }]
      : await withTimeout(o.resolve(url.hostname), o.timeoutMs, `Resolving ${url.hostname}`);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return failed(`DNS: ${url.hostname} did not resolve (${e.code ?? e.message})`);
  }
  if (addresses.length === 0) return failed(`DNS: ${url.hostname} has no address`);
  for (const a of addresses) {
    const why = addressRefusal(a.address, o.allowPrivate);
    if (why) return failed(`Refused: ${url.hostname} resolves to ${why}`);
  }
  return request(url, addresses[0] as Resolved, headers, body, o.timeoutMs, started);
}

function request(
  url: URL,
  target: Resolved,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  started: number,
): Promise<Outcome> {
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  const where = `${target.address}:${port}`;
  // The only answer the connection gets when it looks the name up: the address checked.
  const checked: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  return new Promise<Outcome>((resolve) => {
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      resolve({
        ok,
        statusCode,
        latencyMs: Math.round(performance.now() - started),
        excerpt: statusCode === null ? null : excerptOf(Buffer.concat(chunks)),
        error: ok ? null : (error ?? `The receiver answered ${statusCode}, not a 2xx`),
      });
    };
    const req = (secure ? https : http).request(
      {
        hostname: literalAddress(url.hostname) ?? url.hostname,
        port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: checked,
        agent: false,
        ...(secure && !literalAddress(url.hostname) ? { servername: url.hostname } : {}),
      },
      (res) => {
        statusCode = res.statusCode ?? null;
        const done = () => finish(null);
        res.on('data', (c: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(c);
          size += c.length;
          // The rest of the answer is not read: the excerpt is all that is kept.
          if (size >= EXCERPT_BYTES) done();
        });
        res.once('end', done);
        res.once('error', done);
      },
    );
    const timer = setTimeout(
      () => finish(`No complete answer within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    req.once('error', (err: NodeJS.ErrnoException) => finish(describe(err, where)));
    req.end(body);
  });
}
