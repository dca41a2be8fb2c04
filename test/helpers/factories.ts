// Test data. Users and memberships are written through the data layer (fast: no password
// hashing per user); everything under test goes through HTTP.
import { expect } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { Role } from '../../src/db/schema.ts';
import { newId } from '../../src/ids.ts';
import { insertToken } from '../../src/identity/identity-dal.ts';
import type { TestApp } from './app.ts';

export interface TestUser {
  id: string;
  email: string;
  token: string;
  name: string;
}

const unique = () => randomBytes(5).toString('hex');
// A real argon2id hash of "correct-horse-battery", so that login works for factory users.
export const FACTORY_PASSWORD = 'correct-horse-battery';
let hashOnce: Promise<string> | undefined;

export async function newUser(t: TestApp, name = 'user'): Promise<TestUser> {
  const { hashPassword } = await import('../../src/identity/password.ts');
  hashOnce ??= hashPassword(FACTORY_PASSWORD);
  const now = t.clock.now();
  const id = newId('user', now);
  const email = `${name}.${unique()}@example.test`;
  await t.db
    .insertInto('users')
    .values({ id, email, name, password_hash: await hashOnce, created_at: now })
    .execute();
  // Signed, as the service issues them (identity/token-format.ts).
  const { token } = await insertToken(
    t.db,
    { userId: id, name: 'test', kind: 'personal', now, expiresAt: null },
    t.core.sealer.tokenMac,
  );
  return { id, email, token, name };
}

export async function newTeam(t: TestApp, owner: TestUser, name = 'Team') {
  const r = await t.post('/v2/teams', {
    token: owner.token,
    body: { name, slug: `t-${unique()}` },
  });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; slug: string; name: string; owner_id: string };
}

export async function addMember(
  t: TestApp,
  teamId: string,
  user: TestUser,
  role: Exclude<Role, 'owner'>,
) {
  await t.db
    .insertInto('team_members')
    .values({ team_id: teamId, user_id: user.id, role, joined_at: t.clock.now() })
    .execute();
}

export async function newProject(t: TestApp, owner: TestUser, name = 'Project') {
  const r = await t.post('/v2/projects', { token: owner.token, body: { name } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; name: string; owner_id: string };
}

export async function share(
  t: TestApp,
  teamId: string,
  projectId: string,
  role: Exclude<Role, 'owner'>,
) {
  const now = t.clock.now();
  const id = newId('grant', now);
  await t.db
    .insertInto('grants')
    .values({ id, team_id: teamId, project_id: projectId, role, created_by: null, created_at: now })
    .execute();
  return id;
}

/** An owner's project, a viewer who reaches it through a team grant, and an outsider. */
export async function projectWithReaders(t: TestApp) {
  const ann = await newUser(t, 'ann');
  const viewer = await newUser(t, 'vic');
  const outsider = await newUser(t, 'oscar');
  const team = await newTeam(t, ann, 'Readers');
  await addMember(t, team.id, viewer, 'viewer');
  const project = await newProject(t, ann);
  await share(t, team.id, project.id, 'viewer');
  return { ann, viewer, outsider, project };
}

/** The token from the newest invitation e-mail in the outbox for `email`. */
export async function invitationToken(t: TestApp, email: string): Promise<string> {
  const mail = await t.db
    .selectFrom('emails')
    .selectAll()
    .where('to_address', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const text = t.core.sealer.open(mail.sealed_text);
  const token = /\/invitations\/([A-Za-z0-9_\-.~%]+)/.exec(text)?.[1];
  if (!token) throw new Error(`no invitation link in e-mail to ${email}`);
  return decodeURIComponent(token);
}

export function expectProblem(
  r: { status: number; json: any; headers: Record<string, unknown> },
  status: number,
  code?: string,
) {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  expect(String(r.headers['content-type'])).toContain('application/problem+json');
  expect(r.json.status).toBe(status);
  if (code) expect(r.json.code).toBe(code);
}
