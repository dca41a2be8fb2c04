// A real SMTP server (smtp-server) that answers the end of DATA only after `delayMs`, so a
// service can be killed while a message is in flight. A message counts as accepted when the
// server answers 250 (that is when a real relay takes responsibility for it); `clientGone`
// tells that the sender had already hung up by then and never saw the 250, which is the
// classic duplicate case (RFC 1047): the sender must assume the message was not taken.
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMessage } from '../../helpers/smtp.ts';

export interface AcceptedMail { to: string[]; subject: string; text: string; clientGone: boolean; at: number }

export interface SlowSmtp {
  port: number;
  url: string;
  accepted: AcceptedMail[];
  /** Messages whose DATA has fully arrived and whose 250 is still being held back. */
  inFlight(): number;
  /** Messages whose DATA began, in total. */
  started(): number;
  close(): Promise<void>;
}

export async function startSlowSmtp(delayMs: number, port = 0): Promise<SlowSmtp> {
  const accepted: AcceptedMail[] = [];
  const closed = new Set<string>();
  let holding = 0;
  let begun = 0;
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 500,
    onClose(session) { closed.add(session.id); },
    onData(stream, session, callback) {
      begun++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        holding++;
        setTimeout(() => {
          holding--;
          const m = parseMessage(Buffer.concat(chunks).toString('utf8'));
          accepted.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: m.subject, text: m.text, clientGone: closed.has(session.id), at: Date.now(),
          });
          callback();
        }, delayMs);
      });
    },
  });
  // A sender killed mid-conversation resets the socket; that is expected here.
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.server.address() as net.AddressInfo).port;
  return {
    port: actual,
    url: `smtp://127.0.0.1:${actual}`,
    accepted,
    inFlight: () => holding,
    started: () => begun,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
