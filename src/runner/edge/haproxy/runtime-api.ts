// HAProxy's Runtime API (its admin socket, "stats socket … level admin"): one command per
// connection, answered as text. Commands go one at a time, in order, so that a server is added
// before the map entry that sends requests to it.
import { connect } from 'node:net';

export class RuntimeApi {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private socketPath: string) {}

  /** Sends one command; resolves with HAProxy's answer. */
  command(line: string): Promise<string> {
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(this.socketPath);
        let answer = '';
        socket.setEncoding('utf8');
        socket.on('data', (d) => {
          answer += d;
        });
        socket.on('end', () => resolve(answer.trim()));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy(new Error(`haproxy: no answer to ${line}`)));
        socket.end(`${line}\n`);
      });
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Sends a command whose answer must not be an error (HAProxy's errors do not start alike:
   *  the caller says what a success looks like). */
  async expect(line: string, ok: (answer: string) => boolean): Promise<string> {
    const answer = await this.command(line);
    if (!ok(answer)) throw new Error(`haproxy refused "${line}": ${answer.slice(0, 300)}`);
    return answer;
  }
}
