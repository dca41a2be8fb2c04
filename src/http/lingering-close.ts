// Lingering close, as nginx does it: an answer given before the request's body was read (413
// for a body too large) ends with `Connection: close`. Node then closes the socket as soon as
// the answer is written; the client, still uploading, gets a reset, and a reset can throw away
// the answer it had not read yet (it saw EPIPE instead of the 413). So the socket only half-
// closes (FIN after the answer), reads and discards what still arrives, and closes once the
// client stops: when it half-closes too, after LINGER_IDLE_MS without data, or after
// LINGER_MAX_MS in all.
import type { Socket } from 'node:net';

export const LINGER_IDLE_MS = 2_000;
export const LINGER_MAX_MS = 15_000;

export function lingerOnClose(socket: Socket, idleMs = LINGER_IDLE_MS, maxMs = LINGER_MAX_MS) {
  if ((socket as Socket & { lingering?: boolean }).lingering) return;
  (socket as Socket & { lingering?: boolean }).lingering = true;
  socket.destroySoon = function lingering(this: Socket) {
    if (!this.writable) return void this.destroy();
    this.end();
    let idle = setTimeout(() => this.destroy(), idleMs);
    const cap = setTimeout(() => this.destroy(), maxMs);
    // The HTTP parser still reads the socket and discards the rest of the body; we only watch.
    const seen = () => {
      clearTimeout(idle);
      idle = setTimeout(() => this.destroy(), idleMs);
    };
    this.on('data', seen);
    this.once('end', () => this.destroy());
    this.once('close', () => {
      clearTimeout(idle);
      clearTimeout(cap);
      this.off('data', seen);
    });
  };
}
