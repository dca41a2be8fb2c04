// Deployments are releases (issue 36): deploy (build the branch's head, or a commit), the
// history, a restart of the serving release and a rollback to an earlier one, neither of which
// builds (releases.ts decides what they run). Each answers 202 with the new deployment; the
// frame's page follows it (Location).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { ListQuery, problemResponses } from '../http/schemas.ts';
import type { FrameOpsService } from '../frames/frame-ops-service.ts';
import type { ReleaseHistory } from './release-history.ts';
import { frameUrl } from '../frames/frames-routes.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import * as S from './releases-schemas.ts';

/** Their body is optional: none at all (no content type either) is the empty object, every
 *  field having a default; an empty or null JSON body is still refused. */
const noBodyIsEmpty = async (req: FastifyRequest) => {
  if (req.body === undefined && req.headers['content-type'] === undefined) req.body = {};
};

/** 202 with the new deployment; Location is the frame, whose page follows it. */
function accepted<D>(reply: FastifyReply, p: Parameters<typeof frameUrl>[0], d: D) {
  reply.code(202).header('location', frameUrl(p));
  return d;
}

export function releaseRoutes({
  frameOps,
  history,
}: {
  frameOps: FrameOpsService;
  history: ReleaseHistory;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';
    const Accepted = { 202: Type.Ref('Deployment'), ...problemResponses };

    app.post(
      `${base}/deploy`,
      {
        schema: {
          tags,
          summary:
            'Deploy the frame (member): build its branch, or a commit; clears a back-off trip',
          params: FrameParams,
          body: S.DeployBody,
          response: Accepted,
        },
        preValidation: noBodyIsEmpty,
      },
      async (req, reply) => {
        const p = req.params;
        const d = await frameOps.deploy(
          actorOf(req),
          p.project_id,
          p.space_id,
          p.frame_id,
          req.body.commit_sha,
        );
        return accepted(reply, p, d);
      },
    );

    app.post(
      `${base}/restart`,
      {
        schema: {
          tags,
          summary:
            'Restart the frame (member): its serving release again, replicas replaced, nothing built',
          params: FrameParams,
          response: Accepted,
        },
      },
      async (req, reply) => {
        const p = req.params;
        const d = await frameOps.restart(actorOf(req), p.project_id, p.space_id, p.frame_id);
        return accepted(reply, p, d);
      },
    );

    app.post(
      `${base}/deployments/:deployment_id/rollback`,
      {
        schema: {
          tags,
          summary:
            "Roll back to this release (member): its build again, nothing built; with its env, or the frame's",
          params: S.DeploymentParams,
          body: S.RollbackBody,
          response: Accepted,
        },
        preValidation: noBodyIsEmpty,
      },
      async (req, reply) => {
        const p = req.params;
        const d = await frameOps.rollback(
          actorOf(req),
          p.project_id,
          p.space_id,
          p.frame_id,
          p.deployment_id,
          req.body.config ?? 'release',
        );
        return accepted(reply, p, d);
      },
    );

    app.get(
      `${base}/deployments`,
      {
        schema: {
          tags,
          summary: 'Releases (deployments), newest first, each with what it changed',
          params: FrameParams,
          querystring: ListQuery,
          response: { 200: S.ReleaseList, ...problemResponses },
        },
      },
      async (req) =>
        history.list(actorOf(req), frameScope(req.params), req.query.limit ?? 50, req.query.cursor),
    );

    app.get(
      `${base}/deployments/:deployment_id`,
      {
        schema: {
          tags,
          summary:
            'A release: what it ran, and what changed against the one before it (env values for members)',
          params: S.DeploymentParams,
          response: { 200: Type.Ref('Release'), ...problemResponses },
        },
      },
      async (req) => {
        const p = req.params;
        return history.show(actorOf(req), frameScope(p), p.deployment_id);
      },
    );
  };
}
