// A world of real ids for the tests that walk every route of the OpenAPI document (hostile
// input, fuzz, security): an owner with a team (and a viewer in it) and an org (the viewer is a
// member), a project, a frame with a domain and a volume, a self-hosted agent, a pending
// invitation, an invitation addressed to the owner (so accept and decline would succeed), and a
// grant; an outsider who is signed in but reaches none of it; and the tokens that must be
// refused (revoked, expired, an agent's, the operator's). Also the routes themselves, read from
// the document.
import { expect } from 'vitest';
import { monotonicFactory } from 'ulidx';
import type { TestApp } from './app.ts';
import {
  addMember,
  invitationToken,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from './factories.ts';
import { unique } from './endpoints.ts';
import { addOrgMember } from './orgs.ts';
import { newId, ID_PREFIXES } from '../../src/ids.ts';
import { hashSecret, newSecret } from '../../src/secrets.ts';

export const ADMIN = 'admin-token-for-tests';

export interface World {
  owner: TestUser;
  outsider: TestUser;
  /** Real values, by path parameter name (ids, and `token`: the owner's invitation token). */
  ids: Record<string, string>;
  paths: { project: string; frame: string };
  tokens: { revoked: string; expired: string; agent: string; admin: string };
}

async function ok(p: Promise<{ status: number; json: any; text: string }>, status: number) {
  const r = await p;
  expect(r.status, r.text).toBe(status);
  return r.json;
}

/** A token row of `user` written directly: `expired` ones expired yesterday. */
async function rawToken(t: TestApp, user: TestUser, o: { expired?: boolean; revoked?: boolean }) {
  const now = t.clock.now();
  const token = newSecret('fp');
  await t.db
    .insertInto('access_tokens')
    .values({
      id: newId('token', now),
      user_id: user.id,
      name: 'raw',
      kind: 'personal',
      token_hash: hashSecret(token),
      created_at: now,
      expires_at: o.expired ? new Date(now.getTime() - 86400_000) : null,
      revoked_at: o.revoked ? now : null,
    })
    .execute();
  return token;
}

export async function buildWorld(t: TestApp): Promise<World> {
  const owner = await newUser(t, 'owner');
  const outsider = await newUser(t, 'outsider');
  const viewer = await newUser(t, 'viewer');
  const host = await newUser(t, 'host');
  await newTeam(t, outsider, 'Elsewhere'); // in a team of their own, not in the world's
  const team = await newTeam(t, owner, 'World');
  await addMember(t, team.id, viewer, 'viewer');
  const project = await newProject(t, owner, 'World project');
  const space = (await ok(t.get(`/v2/projects/${project.id}/spaces`, { token: owner.token }), 200))
    .data[0];
  const grant = await share(t, team.id, project.id, 'viewer');
  // An org of the owner's, with the same viewer user as a member (user_id serves both).
  const org = await ok(
    t.post('/v2/orgs', { token: owner.token, body: { name: 'World org', slug: `o-${unique()}` } }),
    201,
  );
  await addOrgMember(t, org.id, viewer, 'member');
  const inv = await ok(
    t.post(`/v2/teams/${team.id}/invitations`, {
      token: owner.token,
      body: { email: `invitee.${unique()}@example.test`, role: 'member' },
    }),
    201,
  );
  const tok = await ok(
    t.post('/v2/user/tokens', { token: owner.token, body: { name: 'listed' } }),
    201,
  );
  const hostTeam = await newTeam(t, host, 'Host');
  await ok(
    t.post(`/v2/teams/${hostTeam.id}/invitations`, {
      token: host.token,
      body: { email: owner.email, role: 'viewer' },
    }),
    201,
  );
  const agent = await ok(
    t.post(`/v2/projects/${project.id}/agents`, { token: owner.token, body: { name: 'edge' } }),
    201,
  );
  const projectPath = `/v2/projects/${project.id}`;
  const frame = await ok(
    t.post(`${projectPath}/spaces/${space.id}/frames`, {
      token: owner.token,
      body: {
        name: 'web',
        owner_id: owner.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
      },
    }),
    201,
  );
  const framePath = `${projectPath}/spaces/${space.id}/frames/${frame.id}`;
  const domain = await ok(
    t.post(`${framePath}/domains`, {
      token: owner.token,
      body: { hostname: `w${unique()}.example.com` },
    }),
    201,
  );
  const volume = await ok(
    t.post(`${framePath}/volumes`, {
      token: owner.token,
      body: { name: 'data', mount_path: '/data', size_gb: 1 },
    }),
    201,
  );
  // The deployment its creation made (not a release: a rollback to it answers 409).
  const deployments = await ok(t.get(`${framePath}/deployments`, { token: owner.token }), 200);
  // A notification endpoint and a delivery of its test event (no worker runs: never sent).
  const endpoint = await ok(
    t.post(`${projectPath}/notifications`, {
      token: owner.token,
      body: { url: 'https://hooks.example.com/world', events: ['deploy.failed'] },
    }),
    201,
  );
  const delivery = await ok(
    t.post(`${projectPath}/notifications/${endpoint.id}/test`, { token: owner.token }),
    202,
  );
  return {
    owner,
    outsider,
    ids: {
      team_id: team.id,
      org_id: org.id,
      user_id: viewer.id,
      invitation_id: inv.id,
      grant_id: grant,
      project_id: project.id,
      space_id: space.id,
      token_id: tok.id,
      agent_id: agent.id,
      frame_id: frame.id,
      domain_id: domain.id,
      volume_id: volume.id,
      deployment_id: deployments.data[0].id,
      endpoint_id: endpoint.id,
      delivery_id: delivery.id,
      token: await invitationToken(t, owner.email),
      hostname: frame.hostname,
    },
    paths: { project: projectPath, frame: framePath },
    tokens: {
      revoked: await rawToken(t, owner, { revoked: true }),
      expired: await rawToken(t, owner, { expired: true }),
      agent: agent.token,
      admin: ADMIN,
    },
  };
}

/** The id prefix of a path parameter (`project_id` → `prj`), if it names an id. */
export const PARAM_PREFIX: Record<string, string> = {
  team_id: ID_PREFIXES.team,
  org_id: ID_PREFIXES.org,
  user_id: ID_PREFIXES.user,
  invitation_id: ID_PREFIXES.invitation,
  grant_id: ID_PREFIXES.grant,
  project_id: ID_PREFIXES.project,
  space_id: ID_PREFIXES.space,
  token_id: ID_PREFIXES.token,
  agent_id: ID_PREFIXES.agent,
  frame_id: ID_PREFIXES.frame,
  domain_id: ID_PREFIXES.domain,
  volume_id: ID_PREFIXES.volume,
  deployment_id: ID_PREFIXES.deployment,
  endpoint_id: ID_PREFIXES.notification_endpoint,
  delivery_id: ID_PREFIXES.notification_delivery,
};

const ulid = monotonicFactory();
/** A well-formed id of that kind that names nothing. */
export const missingId = (param: string) => `${PARAM_PREFIX[param] ?? 'x'}_${ulid()}`;

// ---------------------------------------------------------------------------------------------
// The routes, from the OpenAPI document.

export type Schema = Record<string, any>;
export interface Route {
  method: string;
  path: string;
  params: string[];
  query: Record<string, Schema>;
  body?: Schema;
  scheme: 'bearer' | 'optional' | 'operator' | 'agent' | 'none';
}

function schemeOf(security: Array<Record<string, unknown>> | undefined): Route['scheme'] {
  const s = security ?? [];
  if (s.some((x) => 'operator' in x)) return 'operator';
  if (s.some((x) => 'agent' in x)) return 'agent';
  if (s.some((x) => 'bearer' in x))
    return s.some((x) => Object.keys(x).length === 0) ? 'optional' : 'bearer';
  return 'none';
}

/** An operation's JSON request body schema, its component's when it is a $ref. */
export function bodyOf(doc: any, op: any): Schema | undefined {
  const s = op.requestBody?.content?.['application/json']?.schema;
  return s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s;
}

export function routesOf(doc: any): Route[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(([m, op]) => ({
        method: m.toUpperCase(),
        path,
        params: (op.parameters ?? [])
          .filter((p: any) => p.in === 'path')
          .map((p: any) => p.name as string),
        query: Object.fromEntries(
          (op.parameters ?? [])
            .filter((p: any) => p.in === 'query')
            .map((p: any) => [p.name, p.schema ?? {}]),
        ),
        body: bodyOf(doc, op),
        scheme: schemeOf(op.security),
      })),
  );
}

export const fill = (r: Route, values: Record<string, string>) =>
  r.path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? `missing-${name}`);
