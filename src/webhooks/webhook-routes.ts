import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { Nullable, problemResponses, StringEnum } from '../http/schemas.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import type { WebhookService } from './webhook-service.ts';

const Webhook = Type.Object(
  {
    url: Type.String(),
    secret: Type.String(),
    content_type: Type.String(),
    events: Type.Array(Type.String()),
  },
  { title: 'Webhook' },
);
const PullRequestSide = {
  ref: Type.Optional(Type.String({ maxLength: 1024 })),
  sha: Type.Optional(Type.String({ maxLength: 128 })),
  repo: Type.Optional(
    Type.Union([
      Type.Object({ full_name: Type.Optional(Type.String({ maxLength: 300 })) }),
      Type.Null(),
    ]),
  ),
};
// A push payload carries far more than we read; unlike our own API, unknown fields are fine here.
const PushBody = Type.Object(
  {
    ref: Type.Optional(Type.String({ maxLength: 1024 })),
    after: Type.Optional(Type.String({ maxLength: 128 })),
    deleted: Type.Optional(Type.Boolean()),
    // A pull_request event's: what it did, its number, its head and base.
    action: Type.Optional(Type.String({ maxLength: 64 })),
    number: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    pull_request: Type.Optional(
      Type.Object({
        head: Type.Optional(Type.Object(PullRequestSide)),
        base: Type.Optional(Type.Object(PullRequestSide)),
      }),
    ),
    repository: Type.Optional(
      Type.Object({
        // Unix seconds in GitHub's push events, an ISO 8601 string elsewhere; read leniently.
        pushed_at: Type.Optional(Type.Unknown()),
        name: Type.Optional(Type.String({ maxLength: 200 })),
        owner: Type.Optional(
          Type.Object({
            login: Type.Optional(Type.String({ maxLength: 200 })),
            name: Type.Optional(Type.String({ maxLength: 200 })),
          }),
        ),
      }),
    ),
  },
  { title: 'PushBody', additionalProperties: true },
);

const HookAnswer = Type.Object(
  {
    event: Type.String(),
    duplicate: Type.Optional(
      Type.Boolean({
        description: 'true: this delivery was applied before; nothing was done (200)',
      }),
    ),
    deployments: Type.Array(
      Type.Object({
        frame_id: Type.String(),
        deployment_id: Nullable(Type.String()),
        skipped: Type.Optional(Type.String()),
      }),
    ),
    previews: Type.Array(
      Type.Object({
        frame_id: Type.String({ description: 'The preview frame' }),
        preview_of: Type.String({ description: 'The frame it previews' }),
        branch: Type.String(),
        action: StringEnum(['created', 'updated', 'deleted', 'skipped']),
        deployment_id: Nullable(Type.String()),
        skipped: Type.Optional(Type.String()),
      }),
      { description: 'The preview frames this delivery made, deployed or removed' },
    ),
  },
  { title: 'HookAnswer' },
);

export function webhookRoutes({
  webhooks,
}: {
  webhooks: WebhookService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['webhooks'];
    app.get(
      '/v2/projects/:project_id/webhook',
      {
        schema: {
          tags,
          summary: 'The address and secret to give the git host (admin)',
          params: ProjectParams,
          response: { 200: Webhook, ...problemResponses },
        },
      },
      async (req) => webhooks.show(actorOf(req), req.params.project_id),
    );

    app.post(
      '/v2/projects/:project_id/webhook',
      {
        config: { secretAnswer: 'Read the current secret with GET /v2/projects/<id>/webhook.' },
        schema: {
          tags,
          summary: 'Rotate the webhook secret (admin)',
          params: ProjectParams,
          response: { 200: Webhook, ...problemResponses },
        },
      },
      async (req) => webhooks.rotate(actorOf(req), req.params.project_id),
    );

    app.post(
      '/v2/hooks/git',
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary:
            'GitHub-compatible push and pull_request webhook, signed with X-Hub-Signature-256; deploys the frames watching the branch, and previews',
          description:
            'Each delivery is applied once: a repeat (same body, or same X-GitHub-Delivery) answers 200 with `duplicate: true` and deploys nothing. ' +
            'A push older than 7 days (repository.pushed_at) is 422 `stale_delivery`. Any push whose signature does not verify is 401, whatever it names.',
          querystring: Type.Object({ project: Type.Optional(Type.String({ maxLength: 64 })) }),
          body: PushBody,
          response: {
            200: HookAnswer,
            202: HookAnswer,
            ...problemResponses,
          },
        },
      },
      async (req, reply) => {
        const header = (name: string) =>
          typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined;
        const result = await webhooks.receive({
          event: header('x-github-event'),
          signature: header('x-hub-signature-256'),
          rawBody: req.rawBody ?? '',
          body: req.body,
          projectId: req.query.project,
          deliveryId: header('x-github-delivery'),
        });
        return reply.code(result.duplicate ? 200 : 202).send(result);
      },
    );
  };
}
