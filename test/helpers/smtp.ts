// A real SMTP server for tests (smtp-server): it listens on a local port, speaks plain SMTP
// (no STARTTLS, no AUTH required, as a local relay would) and keeps every message it receives,
// with its text and HTML parts decoded, so tests can follow the links in them.
//
// With `delayMs` it answers the end of DATA only after that long, so a sender can be killed
// while a message is in flight. A message counts as received when the server answers 250
// (when a real relay takes responsibility for it); `clientGone` tells that the sender had hung
// up by then and never saw the 250: the classic duplicate case (RFC 1047), where the sender
// must assume the message was not taken.
import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './wait.ts';

export interface CaughtMail {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  subject: string;
  headers: Record<string, string>;
  /** Decoded text/plain part, or '' if none. */
  text: string;
  /** Decoded text/html part, or '' if none. */
  html: string;
  /** Content types of the leaf parts, in order. */
  parts: string[];
  /** The sender had closed the connection before the 250 (only with `delayMs`). */
  clientGone: boolean;
  at: number;
}

export interface SmtpCatcher {
  port: number;
  url: string;
  messages: CaughtMail[];
  to(address: string): CaughtMail[];
  /** Resolves once `predicate` holds for the received messages; rejects after `timeoutMs`. */
  waitFor(
    predicate: (messages: CaughtMail[]) => boolean,
    timeoutMs?: number,
  ): Promise<CaughtMail[]>;
  /** Messages whose DATA has fully arrived and whose 250 is still held back. */
  inFlight(): number;
  close(): Promise<void>;
}

/** A TCP port nothing listens on right now (bound and released). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Starts the catcher on `port` (0: any free port). */
export async function startSmtp(port = 0, { delayMs = 0 } = {}): Promise<SmtpCatcher> {
  const messages: CaughtMail[] = [];
  const closed = new Set<string>();
  let holding = 0;
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: delayMs ? 500 : 1000,
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        holding++;
        setTimeout(() => {
          holding--;
          const raw = Buffer.concat(chunks).toString('utf8');
          const env = session.envelope;
          messages.push({
            ...parseMessage(raw),
            raw,
            mailFrom: env.mailFrom ? env.mailFrom.address : '',
            rcptTo: env.rcptTo.map((r) => r.address),
            clientGone: closed.has(session.id),
            at: Date.now(),
          });
          callback();
        }, delayMs);
      });
    },
  });
  // A sender killed mid-conversation resets the socket; that is expected.
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.server.address() as net.AddressInfo).port;

  return {
    port: actual,
    url: `smtp://127.0.0.1:${actual}`,
    messages,
    to: (address) =>
      messages.filter((m) => m.rcptTo.map((r) => r.toLowerCase()).includes(address.toLowerCase())),
    async waitFor(predicate, timeoutMs = 10_000) {
      await waitFor(
        `the SMTP catcher's messages to satisfy ${predicate.toString().slice(0, 200)}`,
        () => predicate(messages),
        { timeoutMs, everyMs: 50, context: () => `${messages.length} messages received` },
      );
      return messages;
    },
    inFlight: () => holding,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// --- A small MIME reader: enough for what nodemailer writes (multipart, QP, base64). ---

function splitHeaders(entity: string): { headers: Record<string, string>; body: string } {
  const at = entity.search(/\r?\n\r?\n/);
  const head = at < 0 ? entity : entity.slice(0, at);
  const body = at < 0 ? '' : entity.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

function decodeBody(body: string, encoding = '7bit'): string {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return quotedPrintable(body);
    default:
      return body;
  }
}

function quotedPrintable(s: string): string {
  const soft = s.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft.charAt(i), 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=) in a header value. */
function decodeWords(value: string): string {
  return value.replace(
    /=\?([^?]+)\?([QqBb])\?([^?]*)\?=(?:\s+(?==\?))?/g,
    (_, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeBody(data.replace(/_/g, ' '), 'quoted-printable'),
  );
}

interface Leaf {
  type: string;
  content: string;
}

function leaves(entity: string): { headers: Record<string, string>; leaves: Leaf[] } {
  const { headers, body } = splitHeaders(entity);
  const type = (headers['content-type'] ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const sections = body.split(
      new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?\\r?\\n?`),
    );
    const out: Leaf[] = [];
    for (const s of sections.slice(1)) if (s.trim()) out.push(...leaves(s).leaves);
    return { headers, leaves: out };
  }
  return {
    headers,
    leaves: [
      {
        type: (type.split(';')[0] ?? '').trim(),
        content: decodeBody(body, headers['content-transfer-encoding']),
      },
    ],
  };
}

export function parseMessage(
  raw: string,
): Omit<CaughtMail, 'mailFrom' | 'rcptTo' | 'raw' | 'clientGone' | 'at'> {
  const { headers, leaves: parts } = leaves(raw);
  return {
    headers,
    subject: decodeWords(headers.subject ?? ''),
    text: parts.find((p) => p.type === 'text/plain')?.content ?? '',
    html: parts.find((p) => p.type === 'text/html')?.content ?? '',
    parts: parts.map((p) => p.type),
  };
}
