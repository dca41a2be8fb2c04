import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

export function userByEmail(q: Queryable, email: string) {
  return q.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function userById(q: Queryable, id: string) {
  return q.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Token and its user in one query; expiry and revocation are checked by the caller's clock. */
export function tokenWithUser(q: Queryable, tokenHash: Buffer) {
  return q.selectFrom('access_tokens as t').innerJoin('users as u', 'u.id', 't.user_id')
    .select(['t.id', 't.user_id', 't.expires_at', 't.revoked_at', 't.last_used_at', 'u.email'])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export function listTokens(q: Queryable, userId: string, limit: number, afterId?: string) {
  let query = q.selectFrom('access_tokens').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (afterId) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit + 1).execute();
}

export function pendingInvitationsFor(q: Queryable, email: string, now: Date, limit: number, afterId?: string) {
  let query = q.selectFrom('invitations as i').innerJoin('teams as t', 't.id', 'i.team_id')
    .select(['i.id', 'i.team_id', 'i.email', 'i.role', 'i.invited_by', 'i.created_at', 'i.expires_at',
      'i.accepted_at', 'i.revoked_at', 'i.declined_at', 't.name as team_name', 't.slug as team_slug'])
    .where('i.email', '=', email).where('i.closed_at', 'is', null).where('i.expires_at', '>', now);
  if (afterId) query = query.where('i.id', '>', afterId);
  return query.orderBy('i.id').limit(limit + 1).execute() as Promise<Array<{
    id: string; team_id: string; email: string; role: Role; invited_by: string | null; created_at: Date;
    expires_at: Date; accepted_at: Date | null; revoked_at: Date | null; declined_at: Date | null;
    team_name: string; team_slug: string;
  }>>;
}
