// The typed client of the Frameplane API: openapi-fetch over the generated types, plus what every
// caller would otherwise write again: the bearer token, problem+json as FrameplaneError, an
// Idempotency-Key on every POST, every page of a cursor list, and the SSE streams.
import createClient, { type Client } from 'openapi-fetch';
import { FrameplaneError } from './errors.ts';
import type { components, paths } from './schema.d.ts';
import { readEvents, type StreamEvent } from './sse.ts';

export type Schemas = components['schemas'];
export type Api = Client<paths>;

export interface FrameplaneOptions {
  /** The service, e.g. https://frameplane.example.com */
  server: string;
  /** A user's bearer token (a session from login, or a personal token). */
  token?: string;
  /** A fetch to use instead of the global one (a proxy-aware one, a recorder in tests). */
  fetch?: typeof globalThis.fetch;
}

/** What a cursor list answers: one page and the cursor of the next one (null on the last). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Where a log stream starts and which lines it carries (GET …/logs). */
export type LogsQuery = Omit<NonNullable<paths[LogsPath]['get']['parameters']['query']>, 'limit'>;
type LogsPath = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/logs';

export interface FrameRef {
  project_id: string;
  space_id: string;
  id: string;
}

/**
 * A random UUID (v4). Not crypto.randomUUID: browsers offer that only on HTTPS or localhost,
 * and the console runs in browsers on plain-HTTP deployments too.
 */
function randomKey(): string {
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

export function createFrameplane(opts: FrameplaneOptions) {
  const baseUrl = opts.server.replace(/\/+$/, '');
  const fetchFn = opts.fetch ?? globalThis.fetch;
  const api: Api = createClient<paths>({ baseUrl, fetch: (r) => fetchFn(r) });
  api.use({
    onRequest({ request }) {
      if (opts.token && !request.headers.has('authorization'))
        request.headers.set('authorization', `Bearer ${opts.token}`);
      // A retry of the same Request (same key) is answered from the service's record instead of
      // creating the thing twice; callers who retry themselves pass their own key.
      if (request.method === 'POST' && !request.headers.has('idempotency-key'))
        request.headers.set('idempotency-key', randomKey());
      return request;
    },
  });

  /** The answer's data, or a FrameplaneError for a refusal or failure. */
  async function call<T>(pending: Promise<Answer<T>>): Promise<T> {
    let answer: Answer<T>;
    try {
      answer = await pending;
    } catch (err) {
      if (err instanceof FrameplaneError) throw err;
      const detail = `${baseUrl}: ${(err as Error).message}`;
      throw new FrameplaneError(0, 'unreachable', detail, [], undefined, err);
    }
    if (answer.error !== undefined || !answer.response.ok)
      throw FrameplaneError.from(answer.response, answer.error);
    return answer.data as T;
  }

  /** Every item of a cursor list, fetching the next page only when the consumer gets there. */
  async function* pages<T>(
    fetchPage: (cursor: string | undefined) => Promise<Answer<Page<T>>>,
  ): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const page = await call(fetchPage(cursor));
      yield* page.data;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** All items of a cursor list in an array (for lists that are small by nature). */
  async function all<T>(fetchPage: (cursor: string | undefined) => Promise<Answer<Page<T>>>) {
    const items: T[] = [];
    for await (const item of pages(fetchPage)) items.push(item);
    return items;
  }

  const frameParams = (f: FrameRef) => ({
    project_id: f.project_id,
    space_id: f.space_id,
    frame_id: f.id,
  });

  /** Opens a stream: headers (Accept, Last-Event-ID) and whether it resumes (no start query). */
  type Open = (
    req: { headers: Record<string, string>; parseAs: 'stream'; signal?: AbortSignal },
    resume: boolean,
  ) => Promise<Answer<unknown>>;

  /**
   * Follows a stream of events. When the connection drops without `event: end`, it opens again
   * after a pause with Last-Event-ID, so no event is lost or repeated; it ends on `end`, on
   * `signal`, or when the consumer stops iterating.
   */
  async function* follow<T>(
    open: Open,
    signal?: AbortSignal,
    after?: string,
  ): AsyncGenerator<StreamEvent<T>> {
    let lastId = after;
    while (!signal?.aborted) {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastId) headers['last-event-id'] = lastId;
      const body = await call(
        open({ headers, parseAs: 'stream', signal }, lastId !== undefined) as Promise<
          Answer<ReadableStream<Uint8Array> | null>
        >,
      ).catch((err) => {
        if (signal?.aborted) return null;
        throw err;
      });
      if (!body) return;
      try {
        for await (const e of readEvents<T>(body)) {
          if (e.event === 'end') return;
          if (e.id) lastId = e.id;
          yield e;
        }
      } catch (err) {
        if (signal?.aborted) return;
        if (!(err instanceof TypeError)) throw err; // a dropped connection is a TypeError
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * One of a frame's streams, started from `query`; a resumed one starts from Last-Event-ID, so
   * it drops where to start (`tail`, `cursor`) and keeps which lines (the filters).
   */
  const frameStream =
    (path: 'logs' | 'events', frame: FrameRef, query: Record<string, string | number>): Open =>
    (req, resume) => {
      const { tail: _tail, cursor: _cursor, ...filters } = query;
      return api.GET(`/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/${path}`, {
        ...req,
        params: { path: frameParams(frame), query: resume ? filters : query },
      });
    };

  return {
    api,
    call,
    pages,
    all,
    /**
     * A frame's log lines, live (`tail`, `since` or `cursor` say where to start); the filters
     * of GET …/logs (`q`, `until`, `replica`, `source`) keep applying.
     */
    logs(frame: FrameRef, query: LogsQuery = {}, signal?: AbortSignal) {
      return follow<Schemas['LogLine']>(frameStream('logs', frame, query), signal);
    },
    /**
     * A frame's events (status changes, deployments, …) from now on, or after `cursor`, or
     * after the event whose id is `after` (as Last-Event-ID).
     */
    events(frame: FrameRef, query: { cursor?: string } = {}, signal?: AbortSignal, after?: string) {
      return follow<Schemas['FrameEvent']>(frameStream('events', frame, query), signal, after);
    },
    /**
     * The events of every frame of a project, or of one space's frames (`space_id`), on one
     * connection: from now on, or after `cursor`, or after the position `after`.
     */
    projectEvents(
      project_id: string,
      query: { space_id?: string; cursor?: string } = {},
      signal?: AbortSignal,
      after?: string,
    ) {
      const open: Open = (req, resume) =>
        api.GET('/v2/projects/{project_id}/events', {
          ...req,
          params: {
            path: { project_id },
            query: resume ? { space_id: query.space_id } : query,
          },
        });
      return follow<Schemas['ProjectEvent']>(open, signal, after);
    },
    /** Updates a frame's settings; with `ifMatch` (an ETag) only if nobody changed it since. */
    async updateFrame(
      frame: FrameRef,
      body: Schemas['UpdateFrameBody'],
      opts: { ifMatch?: string; deploy?: boolean } = {},
    ) {
      const answer = await api.PATCH(
        '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}',
        {
          params: { path: frameParams(frame), query: opts.deploy ? { deploy: true } : {} },
          body,
          headers: opts.ifMatch ? { 'if-match': opts.ifMatch } : {},
        },
      );
      const updated = await call(Promise.resolve(answer));
      return { frame: updated, etag: answer.response.headers.get('etag') ?? undefined };
    },
  };
}

export type Frameplane = ReturnType<typeof createFrameplane>;
