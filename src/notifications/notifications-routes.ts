import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import type { NotificationsLog } from './notifications-log.ts';
import * as S from './notifications-schemas.ts';
import type { NotificationsService } from './notifications-service.ts';

const LOST_SECRET =
  'Rotate the secret (POST /v2/projects/<id>/notifications/<endpoint_id>/secret) to get a new one.';

export function notificationRoutes({
  notifications,
  notificationsLog,
}: {
  notifications: NotificationsService;
  notificationsLog: NotificationsLog;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['notifications'];
    const base = '/v2/projects/:project_id/notifications';
    const one = `${base}/:endpoint_id`;

    app.post(
      base,
      {
        config: { secretAnswer: LOST_SECRET },
        schema: {
          tags,
          summary: 'Add a notification endpoint (admin); its signing secret is shown once',
          params: ProjectParams,
          body: S.EndpointBody,
          response: { 201: S.EndpointWithSecret, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(await notifications.create(actorOf(req), req.params.project_id, req.body)),
    );

    app.get(
      base,
      {
        schema: {
          tags,
          summary: "The project's notification endpoints, in creation order (admin)",
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: S.EndpointList, ...problemResponses },
        },
      },
      async (req) =>
        notifications.list(
          actorOf(req),
          req.params.project_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.get(
      one,
      {
        schema: {
          tags,
          summary: 'A notification endpoint (admin)',
          params: S.EndpointParams,
          response: { 200: S.NotificationEndpoint, ...problemResponses },
        },
      },
      async (req) =>
        notifications.show(actorOf(req), req.params.project_id, req.params.endpoint_id),
    );

    app.patch(
      one,
      {
        schema: {
          tags,
          summary: 'Change a notification endpoint, turn it off or on again (admin)',
          params: S.EndpointParams,
          body: S.EndpointPatch,
          response: { 200: S.NotificationEndpoint, ...problemResponses },
        },
      },
      async (req) =>
        notifications.update(actorOf(req), req.params.project_id, req.params.endpoint_id, req.body),
    );

    app.delete(
      one,
      {
        schema: {
          tags,
          summary: 'Remove a notification endpoint and its delivery log (admin)',
          params: S.EndpointParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await notifications.remove(actorOf(req), req.params.project_id, req.params.endpoint_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${one}/secret`,
      {
        config: { secretAnswer: LOST_SECRET },
        // A request with no body at all (no Content-Type) rotates with the defaults, as it did
        // before the body had fields; a body sent must be an object, as everywhere.
        preValidation: async (req) => {
          if (req.body === undefined && req.headers['content-type'] === undefined) req.body = {};
        },
        schema: {
          tags,
          summary: 'Rotate the signing secret (admin); the new one is shown once',
          params: S.EndpointParams,
          body: S.SecretRotation,
          response: { 200: S.EndpointWithSecret, ...problemResponses },
        },
      },
      async (req) => {
        const { project_id, endpoint_id } = req.params;
        const hours = req.body.expire_previous_in_hours ?? 0;
        return notifications.rotateSecret(actorOf(req), project_id, endpoint_id, hours);
      },
    );

    app.post(
      `${one}/test`,
      {
        schema: {
          tags,
          summary: 'Send a test event, `ping` (admin); answers the queued delivery',
          params: S.EndpointParams,
          response: { 202: S.NotificationDelivery, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(202)
          .send(
            await notificationsLog.test(
              actorOf(req),
              req.params.project_id,
              req.params.endpoint_id,
            ),
          ),
    );

    app.get(
      `${one}/deliveries`,
      {
        schema: {
          tags,
          summary: "The endpoint's deliveries with every try, newest first (admin)",
          params: S.EndpointParams,
          querystring: ListQuery,
          response: { 200: S.DeliveryList, ...problemResponses },
        },
      },
      async (req) =>
        notificationsLog.list(
          actorOf(req),
          req.params.project_id,
          req.params.endpoint_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.get(
      `${one}/deliveries/:delivery_id`,
      {
        schema: {
          tags,
          summary: 'A delivery with every try (admin)',
          params: S.DeliveryParams,
          response: { 200: S.NotificationDelivery, ...problemResponses },
        },
      },
      async (req) =>
        notificationsLog.show(
          actorOf(req),
          req.params.project_id,
          req.params.endpoint_id,
          req.params.delivery_id,
        ),
    );

    app.post(
      `${one}/deliveries/:delivery_id/redeliver`,
      {
        schema: {
          tags,
          summary: 'Send a delivery again, same event id and body (admin); answers the new one',
          params: S.DeliveryParams,
          response: { 202: S.NotificationDelivery, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(202)
          .send(
            await notificationsLog.redeliver(
              actorOf(req),
              req.params.project_id,
              req.params.endpoint_id,
              req.params.delivery_id,
            ),
          ),
    );
  };
}
