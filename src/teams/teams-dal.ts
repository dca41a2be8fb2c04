import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** Every team the user is in, with their role and the member count, in one query. */
export function listTeamsFor(q: Queryable, userId: string, limit: number, afterId?: string) {
  let query = q.selectFrom('team_members as m').innerJoin('teams as t', 't.id', 'm.team_id')
    .selectAll('t').select('m.role')
    .where('m.user_id', '=', userId);
  if (afterId) query = query.where('t.id', '>', afterId);
  return query.orderBy('t.id').limit(limit + 1).execute();
}

export function listMembers(q: Queryable, teamId: string, limit: number, after?: [string, string]) {
  let query = q.selectFrom('team_members as m').innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name', 'm.role', 'm.joined_at']).where('m.team_id', '=', teamId);
  if (after) {
    const [at, id] = after;
    // A row comparison: the index (team_id, joined_at, user_id) serves it as one range scan.
    query = query.where(sql`(m.joined_at, m.user_id)`, '>', sql`(${new Date(at)}::timestamptz, ${id}::text)`);
  }
  return query.orderBy('m.joined_at').orderBy('m.user_id').limit(limit + 1).execute();
}

export function member(q: Queryable, teamId: string, userId: string) {
  return q.selectFrom('team_members as m').innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.team_id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.joined_at'])
    .where('m.team_id', '=', teamId).where('m.user_id', '=', userId).executeTakeFirst();
}
