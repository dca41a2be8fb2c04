// Server-sent events from a fetch Response body, as an async iterator (eventsource-parser does
// the framing). The service sends each event's data as one JSON value, and `event: end` when
// the stream is over for good (the frame was deleted).
import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface StreamEvent<T> {
  event: string;
  id: string | undefined;
  data: T;
}

export async function* readEvents<T>(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<StreamEvent<T>> {
  const events = body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream());
  const reader = events.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const data = value.data === '' ? null : JSON.parse(value.data);
      yield { event: value.event ?? 'message', id: value.id, data: data as T };
    }
  } finally {
    // The consumer stopped early (break, return): close the connection too.
    await reader.cancel().catch(() => {});
  }
}
