// Direct database access for the process-level tests: users and tokens written through the
// data layer (no password hashing per user), and reads of what the service stored. Everything
// under test still goes through the child processes' HTTP.
import { randomBytes } from 'node:crypto';
import { createDatabase, type Database } from '../../../src/db/database.ts';
import { newId } from '../../../src/ids.ts';
import { hashSecret, newSecret, sealer } from '../../../src/secrets.ts';
import { SECRET_KEY } from './service.ts';

export interface SeedUser {
  id: string;
  email: string;
  token: string;
  tokenId: string;
}

export function openDatabase(url: string): Database {
  return createDatabase(url, { max: 4 });
}

export const unique = () => randomBytes(5).toString('hex');

export async function seedUser(
  db: Database,
  name = 'user',
  opts: { expiresAt?: Date } = {},
): Promise<SeedUser> {
  const now = new Date();
  const id = newId('user', now);
  const email = `${name}.${unique()}@example.test`;
  // Not a usable password hash: these users never log in, they use their token.
  await db
    .insertInto('users')
    .values({ id, email, name, password_hash: 'unused', created_at: now })
    .execute();
  const token = newSecret('fp');
  const tokenId = newId('token', now);
  await db
    .insertInto('access_tokens')
    .values({
      id: tokenId,
      user_id: id,
      name: 'faults',
      kind: 'personal',
      token_hash: hashSecret(token),
      created_at: now,
      expires_at: opts.expiresAt ?? null,
    })
    .execute();
  return { id, email, token, tokenId };
}

/** The invitation link token in the newest outbox e-mail to `email` (sealed with SECRET_KEY). */
export async function invitationTokenFor(db: Database, email: string): Promise<string> {
  const mail = await db
    .selectFrom('emails')
    .selectAll()
    .where('to_address', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const text = sealer(SECRET_KEY).open(mail.sealed_text);
  const token = /\/invitations\/([A-Za-z0-9_\-.~%]+)/.exec(text)?.[1];
  if (!token) throw new Error(`no invitation link in the e-mail to ${email}`);
  return decodeURIComponent(token);
}
