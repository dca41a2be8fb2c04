// The SQL of the built-in cloud (builtin.ts): finding and re-keying its `agents` row.
import type { Queryable } from '../db/database.ts';

/** The cloud agent whose token hashes to `tokenHash`, if any. */
export function findCloudAgentByToken(db: Queryable, tokenHash: Buffer) {
  return db
    .selectFrom('agents')
    .select('id')
    .where('token_hash', '=', tokenHash)
    .where('kind', '=', 'cloud')
    .executeTakeFirst();
}

/** The oldest cloud agent called `name`, if any. */
export function findCloudAgentByName(db: Queryable, name: string) {
  return db
    .selectFrom('agents')
    .select('id')
    .where('kind', '=', 'cloud')
    .where('name', '=', name)
    .orderBy('id')
    .executeTakeFirst();
}

export async function setAgentTokenHash(db: Queryable, agentId: string, tokenHash: Buffer) {
  await db.updateTable('agents').set({ token_hash: tokenHash }).where('id', '=', agentId).execute();
}
