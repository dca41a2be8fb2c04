// A frame's previews (issue 36): listed under it. They are made by pushes and pull requests
// (webhooks/), and read, changed and deleted as any frame.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { ListQuery, problemResponses } from '../http/schemas.ts';
import * as S from '../frames/frames-schemas.ts';
import type { PreviewsService } from './previews-service.ts';

export function previewRoutes({
  previews,
}: {
  previews: PreviewsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id/previews',
      {
        schema: {
          tags: ['frames'],
          summary: "A frame's preview frames (of other branches and pull requests), oldest first",
          params: S.FrameParams,
          querystring: ListQuery,
          response: { 200: S.FrameList, ...problemResponses },
        },
      },
      async (req) => {
        const { limit, cursor } = req.query;
        return previews.list(actorOf(req), frameScope(req.params), limit ?? 50, cursor);
      },
    );
  };
}
