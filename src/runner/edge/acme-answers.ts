// What the edge answers itself on plain HTTP when it has TLS (CONTRACT 5b): the ACME server's
// HTTP-01 challenges, for hosts a frame here holds (the service keeps the answers and says which
// hosts those are), and a 308
// to HTTPS for every other request to a host it holds a certificate for.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CertificateSource } from './certificates.ts';
import { normalizeHost } from './table.ts';

export const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

function plainText(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** Look-ups of challenges one edge has in flight at most; beyond, 503 (anyone may ask). */
export const MAX_CHALLENGE_LOOKUPS = 16;

/** Answers a challenge request: the key authorization, or 404 (the service knows no such
 *  challenge for a host a frame of this agent holds). */
export async function answerChallenge(
  req: IncomingMessage,
  res: ServerResponse,
  lookups: { inFlight: number },
  source: CertificateSource,
) {
  const token = (req.url ?? '').slice(CHALLENGE_PREFIX.length);
  if (!TOKEN.test(token) || (req.method !== 'GET' && req.method !== 'HEAD'))
    return plainText(res, 404, 'no such challenge\n');
  if (lookups.inFlight >= MAX_CHALLENGE_LOOKUPS)
    return plainText(res, 503, 'too many challenge look-ups at once\n');
  lookups.inFlight++;
  try {
    const answer = await source.challenge(token);
    if (answer === undefined) return plainText(res, 404, 'no such challenge\n');
    plainText(res, 200, answer);
  } catch {
    plainText(res, 503, 'the service cannot be asked now\n');
  } finally {
    lookups.inFlight--;
  }
}

/** 308 to the same host and path over HTTPS: the method and body stay as they were. */
export function redirectToHttps(req: IncomingMessage, res: ServerResponse, httpsPort: number) {
  const host = normalizeHost(req.headers.host) as string;
  const path = req.url?.startsWith('/') ? req.url : '/';
  const location = `https://${host}${httpsPort === 443 ? '' : `:${httpsPort}`}${path}`;
  const body = `Moved to ${location}\n`;
  res.writeHead(308, {
    location,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
