// The invitation routes of a group, one handler each for both kinds (kinds.ts): a team's at
// /v2/teams, an organization's at /v2/orgs (orgs/org-invitations-routes.ts). The service does
// the work for either kind; what differs here is the path, the tag, the words and the schemas,
// which name the group's id `team_id` or `org_id`.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import type { Actor } from '../actor.ts';
import type { Role } from '../access/roles.ts';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { InvitationsService } from './invitations-service.ts';
import * as S from './invitation-schemas.ts';
import { Membership, TeamParams } from './teams-schemas.ts';

/** How the routes of one kind name it: where, under which tag, in which words and schemas. */
export interface InvitationRoutesOf {
  /** `/v2/teams` or `/v2/orgs`. */
  path: string;
  /** The path parameter of the group's id. */
  idParam: 'team_id' | 'org_id';
  tags: string[];
  /** The summaries that name the kind; revoking and resending read the same for both. */
  summaries: { list: string; create: string; accept: string; decline: string };
  schemas: {
    /** The path parameters: the group's id; the group's and the invitation's. */
    groupParams: TSchema;
    invitationParams: TSchema;
    list: TSchema;
    invitation: TSchema;
    createBody: TSchema;
    membership: TSchema;
  };
}

/** The service behind the routes: the team invitations, or their org face (org-invitations.ts). */
interface GroupInvitations {
  list(actor: Actor, groupId: string, limit: number, cursor?: string): Promise<unknown>;
  create(actor: Actor, groupId: string, input: { email: string; role: Role }): Promise<unknown>;
  revoke(actor: Actor, groupId: string, invitationId: string): Promise<void>;
  resend(actor: Actor, groupId: string, invitationId: string): Promise<unknown>;
  accept(actor: Actor, token: string): Promise<unknown>;
  decline(actor: Actor | undefined, token: string): Promise<void>;
}

// The schemas are the kind's, so the request's types are not known here; each route's schema
// has checked its parameters and body before the handler runs.
type Ids = Record<InvitationRoutesOf['idParam'] | 'invitation_id', string>;
type CreateInput = { email: string; role: Role };

export function groupInvitationRoutes(
  invitations: GroupInvitations,
  { path, idParam, tags, summaries, schemas }: InvitationRoutesOf,
): FastifyPluginAsyncTypebox {
  return async (app) => {
    const one = `${path}/:${idParam}/invitations/:invitation_id`;
    const groupOf = (params: unknown) => (params as Ids)[idParam];
    const invitationOf = (params: unknown) => (params as Ids).invitation_id;

    app.get(
      `${path}/:${idParam}/invitations`,
      {
        schema: {
          tags,
          summary: summaries.list,
          params: schemas.groupParams,
          querystring: ListQuery,
          response: { 200: schemas.list, ...problemResponses },
        },
      },
      async (req) => {
        const { limit, cursor } = req.query;
        return invitations.list(actorOf(req), groupOf(req.params), limit ?? 50, cursor);
      },
    );

    app.post(
      `${path}/:${idParam}/invitations`,
      {
        schema: {
          tags,
          summary: summaries.create,
          params: schemas.groupParams,
          body: schemas.createBody,
          response: { 201: schemas.invitation, ...problemResponses },
        },
      },
      async (req, reply) => {
        const input = req.body as CreateInput;
        const created = await invitations.create(actorOf(req), groupOf(req.params), input);
        return reply.code(201).send(created);
      },
    );

    app.delete(
      one,
      {
        schema: {
          tags,
          summary: 'Take back an invitation (admin)',
          params: schemas.invitationParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await invitations.revoke(actorOf(req), groupOf(req.params), invitationOf(req.params));
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${one}/resend`,
      {
        schema: {
          tags,
          summary: 'New token, new 7 days, new e-mail (admin)',
          params: schemas.invitationParams,
          response: { 200: schemas.invitation, ...problemResponses },
        },
      },
      async (req) =>
        invitations.resend(actorOf(req), groupOf(req.params), invitationOf(req.params)),
    );

    app.post(
      `${path}/invitations/:token/accept`,
      {
        schema: {
          tags,
          summary: summaries.accept,
          params: S.TokenParams,
          response: { 200: schemas.membership, ...problemResponses },
        },
      },
      async (req) => invitations.accept(actorOf(req), req.params.token),
    );

    app.post(
      `${path}/invitations/:token/decline`,
      {
        config: { auth: 'optional' },
        schema: {
          tags,
          summary: summaries.decline,
          params: S.TokenParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await invitations.decline(req.actor, req.params.token);
        return reply.code(204).send(null);
      },
    );
  };
}

export function invitationRoutes({
  invitations,
}: {
  invitations: InvitationsService;
}): FastifyPluginAsyncTypebox {
  return groupInvitationRoutes(invitations, {
    path: '/v2/teams',
    idParam: 'team_id',
    tags: ['invitations'],
    summaries: {
      list: "A team's invitations (admin)",
      create: 'Invite an e-mail address (admin); sends the e-mail',
      accept: "Accept an invitation addressed to the caller's e-mail",
      decline: 'Decline an invitation (the token suffices; a signed-in caller must match)',
    },
    schemas: {
      groupParams: TeamParams,
      invitationParams: S.InvitationParams,
      list: S.InvitationList,
      invitation: Type.Ref('Invitation'),
      createBody: S.CreateInvitationBody,
      membership: Membership,
    },
  });
}
