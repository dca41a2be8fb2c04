// Issue 13, item 3: last_used_at is written in batches (src/identity/token-touches.ts), so a
// request whose token the cache did not hold sends one statement, not two.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { createTokenTouches } from '../../src/identity/token-touches.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const lastUsed = async (userId: string) =>
  (
    await t.db
      .selectFrom('access_tokens')
      .select('last_used_at')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow()
  ).last_used_at;

async function until(check: () => Promise<boolean>, what: string, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('token last use, batched (issue 13, item 3)', () => {
  it('a request records its token as used, at the service time of the request', async () => {
    const [a, b] = [await newUser(t, 'a'), await newUser(t, 'b')];
    const before = t.clock.now().getTime();
    expect((await t.get('/v2/user', { token: a.token })).status).toBe(200);
    expect((await t.get('/v2/user', { token: b.token })).status).toBe(200);
    const after = t.clock.now().getTime();
    await t.services.identity.flushTokenUses();
    for (const u of [a, b]) {
      const used = (await lastUsed(u.id))?.getTime() ?? 0;
      expect(used).toBeGreaterThanOrEqual(before);
      expect(used).toBeLessThanOrEqual(after);
    }
  });

  it('writes each token at its own time when the batch is due', async () => {
    const users = [await newUser(t, 'c'), await newUser(t, 'd'), await newUser(t, 'e')];
    const ids = await Promise.all(
      users.map(async (u) => {
        const row = await t.db
          .selectFrom('access_tokens')
          .select('id')
          .where('user_id', '=', u.id)
          .executeTakeFirstOrThrow();
        return row.id;
      }),
    );
    const touches = createTokenTouches(t.db, 50);
    const time = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, i));
    for (const [i, id] of ids.entries()) touches.touch(id, time(i));
    touches.touch(at(ids, 0), time(9)); // a later use of the same token wins
    await until(async () => (await lastUsed(at(users, 2).id)) !== null, 'the batch');
    expect(await Promise.all(users.map((u) => lastUsed(u.id)))).toEqual([
      time(9),
      time(1),
      time(2),
    ]);
  });
});
