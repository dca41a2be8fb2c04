// A client of server-sent event streams for tests, over a real socket with Node's fetch: it
// collects events in the background; every wait is bounded, and the test closes what it opens.
import { waitFor } from './wait.ts';

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

/** Opens a stream at `url` and collects its events in the background. */
export async function openEventStream(
  url: string,
  token: string,
  headers: Record<string, string> = {},
) {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers },
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  const raw: string[] = [];
  let ended = false;
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          raw.push(block);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .filter((l) => !l.startsWith(':') && l.includes(':'))
              .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trimStart()]),
          );
          if (fields.data !== undefined)
            events.push({
              id: fields.id,
              event: fields.event ?? 'message',
              data: JSON.parse(fields.data),
            });
        }
      }
    } catch {
      /* aborted */
    }
    ended = true;
  })();
  return {
    res,
    events,
    raw,
    get ended() {
      return ended;
    },
    of: (type: string) => events.filter((e) => e.event === type),
    /** Waits until `ok` holds, at most `ms`. */
    async until(ok: () => boolean, ms = 10_000) {
      await waitFor(`a stream condition (${ok.toString().slice(0, 200)})`, ok, {
        timeoutMs: ms,
        context: () => `events so far: ${JSON.stringify(events)}`,
      });
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}
