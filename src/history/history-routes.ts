// A frame's logs and events (CONTRACT 5): JSON pages, or with `Accept: text/event-stream` a live
// stream. Access is checked before the stream opens, so a refusal is a normal problem answer.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { actorOf } from '../http/auth.ts';
import { problemResponses } from '../http/schemas.ts';
import { eventStreams, lastEventId, wantsEventStream } from '../http/sse.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import type { Follow, HistoryService } from './history-service.ts';
import * as S from './history-schemas.ts';
import type { ProjectEventsService } from './project-events-service.ts';
import type { HeldCount } from '../metrics/held.ts';

interface Deps {
  history: HistoryService;
  projectEvents: ProjectEventsService;
  /** Counts the event streams open (metrics). */
  metrics?: { held: { eventStream: HeldCount } };
}

export function historyRoutes({
  history,
  projectEvents,
  metrics,
}: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';
    const openStream = eventStreams(app, { held: metrics?.held.eventStream });

    /** A JSON page, or with `Accept: text/event-stream` the follow, streamed. */
    async function pageOrStream(
      req: FastifyRequest,
      reply: FastifyReply,
      page: () => Promise<unknown>,
      follow: (lastEventId: string | undefined) => Promise<Follow>,
    ) {
      if (!wantsEventStream(req)) return page();
      const f = await follow(lastEventId(req));
      f.run(openStream(reply), (err) => req.log.warn({ err }, 'stream failed'));
      return reply;
    }

    app.get(
      `${base}/logs`,
      {
        schema: {
          tags,
          params: FrameParams,
          querystring: S.LogsQuery,
          response: { 200: S.LogPage, ...problemResponses },
          produces: ['application/json', 'text/event-stream'],
          summary: 'Log lines, oldest first; with Accept: text/event-stream a live stream',
          description:
            'As a stream (`Accept: text/event-stream`), each line is `id: <id>`, `event: log`, `data: <line as JSON>`. ' +
            'It starts after `Last-Event-ID` or `cursor` when given; otherwise with the newest `tail` lines (100 by default), ' +
            'or with `since` alone every line from that time on. Comment lines keep it alive every 15 s; `event: end` closes it ' +
            'when the frame is deleted.',
        },
      },
      async (req, reply) => {
        const { project_id, space_id, frame_id } = req.params;
        return pageOrStream(
          req,
          reply,
          () =>
            history.logs(actorOf(req), project_id, space_id, frame_id, {
              ...req.query,
              limit: req.query.limit ?? 100,
            }),
          (lastEventId) =>
            history.followLogs(actorOf(req), project_id, space_id, frame_id, {
              ...req.query,
              lastEventId,
            }),
        );
      },
    );

    app.get(
      `${base}/logs/download`,
      {
        schema: {
          tags,
          params: FrameParams,
          querystring: S.LogsDownloadQuery,
          response: { 200: S.LogsText, ...problemResponses },
          produces: ['text/plain'],
          summary: 'The matching log lines as a text file, oldest first',
          description:
            'The filters of GET …/logs, every matching line the retention keeps, streamed as ' +
            '`text/plain` with `Content-Disposition: attachment`.',
        },
      },
      async (req, reply) => {
        const { project_id, space_id, frame_id } = req.params;
        const { name, text } = await history.downloadLogs(
          actorOf(req),
          project_id,
          space_id,
          frame_id,
          req.query,
        );
        return (
          reply
            .header('cache-control', 'no-store')
            // A frame's name may hold quotes or any Unicode; a header's filename stays ASCII.
            .header(
              'content-disposition',
              `attachment; filename="${name.replace(/[^\w.-]/g, '_')}-logs.txt"`,
            )
            .type('text/plain; charset=utf-8')
            .send(Readable.from(text))
        );
      },
    );

    app.get(
      `${base}/events`,
      {
        schema: {
          tags,
          params: FrameParams,
          querystring: S.EventsQuery,
          response: { 200: S.FrameEventPage, ...problemResponses },
          produces: ['application/json', 'text/event-stream'],
          summary:
            'Frame events (operations and status changes) in creation order; with Accept: text/event-stream a live stream',
          description:
            'As a stream (`Accept: text/event-stream`), each event is `id: <id>`, `event: frame_event`, `data: <event as JSON>`. ' +
            'It sends what follows `Last-Event-ID` or `cursor` when given, otherwise only events from now on. Comment lines keep it ' +
            'alive every 15 s; `event: end` closes it when the frame is deleted.',
        },
      },
      async (req, reply) => {
        const { project_id, space_id, frame_id } = req.params;
        const { limit = 50, cursor, tail } = req.query;
        return pageOrStream(
          req,
          reply,
          () =>
            history.events(actorOf(req), project_id, space_id, frame_id, { limit, cursor, tail }),
          (lastEventId) =>
            history.followEvents(actorOf(req), project_id, space_id, frame_id, {
              cursor,
              lastEventId,
            }),
        );
      },
    );

    app.get(
      '/v2/projects/:project_id/events',
      {
        schema: {
          tags,
          params: ProjectParams,
          querystring: S.ProjectEventsQuery,
          response: { 200: S.ProjectEventPage, ...problemResponses },
          produces: ['application/json', 'text/event-stream'],
          summary:
            "The events of every frame of the project (or of one space's frames), in one order; with Accept: text/event-stream a live stream",
          description:
            'The events of GET …/frames/{frame_id}/events, each with its `frame_id` and `space_id`, so that one connection ' +
            'follows every frame of a project or, with `space_id`, of a space. Events of different frames come in the order ' +
            'their writes committed (an event appears once every write begun before it has ended), so one position resumes ' +
            'them all. As a stream (`Accept: text/event-stream`), each event is `id: <position>`, `event: frame_event`, ' +
            '`data: <event as JSON>`; the position is opaque and is also a valid `cursor`. The stream sends what follows ' +
            '`Last-Event-ID` or `cursor` when given, otherwise only events from now on. Comment lines keep it alive every ' +
            '15 s; `event: end` closes it when the project is deleted or access to it is lost.',
        },
      },
      async (req, reply) => {
        const { project_id } = req.params;
        const { limit = 50, cursor, space_id } = req.query;
        return pageOrStream(
          req,
          reply,
          () => projectEvents.events(actorOf(req), project_id, { limit, cursor, space_id }),
          (lastEventId) =>
            projectEvents.followEvents(actorOf(req), project_id, { cursor, space_id, lastEventId }),
        );
      },
    );
  };
}
