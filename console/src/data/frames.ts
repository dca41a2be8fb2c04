// What the frame page's parts share: the frame's reference, its cache keys, and the live
// streams (the SDK's SSE iterators) as React effects. No polling: the frame is read again when
// its event stream says something happened.
import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { fp, type Schemas } from '../api.ts';

export interface FrameRef {
  project_id: string;
  space_id: string;
  id: string;
}
export type Frame = Schemas['Frame'];
export type FrameEvent = Schemas['FrameEvent'];
export type LogLine = Schemas['LogLine'];

export const frameKey = (f: FrameRef) => ['frame', f.id];
export const params = (f: FrameRef) => ({
  params: { path: { project_id: f.project_id, space_id: f.space_id, frame_id: f.id } },
});

const KEEP = 500;

/** Runs `follow` until the component goes away; a failed stream is shown, not thrown. */
function useStream(start: (signal: AbortSignal) => Promise<void>, deps: unknown[]) {
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const abort = new AbortController();
    setError(undefined);
    start(abort.signal).catch((err) => {
      if (!abort.signal.aborted) setError(err);
    });
    return () => abort.abort();
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what restarts it.
  }, deps);
  return error;
}

/** How many of the frame's newest events the page opens with. */
const RECENT = 50;

/**
 * The frame's recent events, newest first, then each one as it happens; each new one makes the
 * frame, its deployments and its settings be read again, so the status shown follows a stop,
 * start or deploy to its end. `loaded` says the history has been read.
 */
export function useLiveEvents(frame: FrameRef) {
  const client = useQueryClient();
  const [events, setEvents] = useState<FrameEvent[]>([]);
  const [loaded, setLoaded] = useState(false);
  const error = useStream(
    async (signal) => {
      // Another frame's page (a preview's link) reuses the component: its events start afresh.
      setEvents([]);
      setLoaded(false);
      // Typed as JSON or the event stream (the operation declares both); this asks for JSON.
      const recent = (await fp().call(
        fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/events', {
          params: { ...params(frame).params, query: { tail: RECENT } },
          signal,
        }),
      )) as { data: FrameEvent[] };
      setEvents([...recent.data].reverse());
      setLoaded(true);
      // From the newest event read (Last-Event-ID): none is lost or shown twice between them.
      for await (const e of fp().events(frame, {}, signal, recent.data.at(-1)?.id)) {
        setEvents((list) => [e.data, ...list].slice(0, KEEP));
        await client.invalidateQueries({ queryKey: frameKey(frame) });
        // The space's list is not shown now; it is read again when it is.
        await client.invalidateQueries({ queryKey: ['space', frame.space_id, 'frames'] });
      }
    },
    [frame.id],
  );
  return { events, loaded, error };
}

/** What the log view searches for: a piece of text, one source (the API's filters). */
export interface LogFilter {
  q?: string;
  source?: LogLine['source'];
}

/** The frame's log lines that match `filter`: the last 100, then each new one. */
export function useLiveLogs(frame: FrameRef, filter: LogFilter = {}) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const error = useStream(
    async (signal) => {
      setLines([]);
      const query = { tail: 100, ...(filter.q ? { q: filter.q } : {}), source: filter.source };
      for await (const e of fp().logs(frame, query, signal))
        setLines((list) => [...list, e.data].slice(-KEEP));
    },
    [frame.id, filter.q, filter.source],
  );
  return { lines, error };
}

/** A space's frames as they change: one project stream for the space, on one connection. */
export function useLiveSpace(project_id: string, space_id: string, listKey: unknown[]) {
  const client = useQueryClient();
  return useStream(
    async (signal) => {
      // What changed while the list was not shown (its copy may look fresh) is read first.
      await client.invalidateQueries({ queryKey: listKey });
      for await (const _ of fp().projectEvents(project_id, { space_id }, signal))
        await client.invalidateQueries({ queryKey: listKey });
    },
    [project_id, space_id],
  );
}
