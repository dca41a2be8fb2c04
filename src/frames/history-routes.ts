// A frame's logs and events (CONTRACT 5): JSON pages, or with `Accept: text/event-stream` a live
// stream. Access is checked before the stream opens, so a refusal is a normal problem answer.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { problemResponses } from '../http/schemas.ts';
import { eventStreams, lastEventId, wantsEventStream } from '../http/sse.ts';
import { FrameParams } from './frames-schemas.ts';
import type { HistoryService } from './history-service.ts';
import * as S from './history-schemas.ts';

export function historyRoutes({ history }: { history: HistoryService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';
    const openStream = eventStreams(app);

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
        if (!wantsEventStream(req))
          return history.logs(actorOf(req), project_id, space_id, frame_id, {
            ...req.query,
            limit: req.query.limit ?? 100,
          });
        const follow = await history.followLogs(actorOf(req), project_id, space_id, frame_id, {
          ...req.query,
          lastEventId: lastEventId(req),
        });
        follow.run(openStream(reply), (err) => req.log.warn({ err }, 'log stream failed'));
        return reply;
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
        if (!wantsEventStream(req))
          return history.events(
            actorOf(req),
            project_id,
            space_id,
            frame_id,
            req.query.limit ?? 50,
            req.query.cursor,
          );
        const follow = await history.followEvents(actorOf(req), project_id, space_id, frame_id, {
          cursor: req.query.cursor,
          lastEventId: lastEventId(req),
        });
        follow.run(openStream(reply), (err) => req.log.warn({ err }, 'event stream failed'));
        return reply;
      },
    );
  };
}
