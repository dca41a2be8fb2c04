// Issue 13, item 3: last_used_at is written in batches (src/identity/token-touches.ts), so a
// request whose token the cache did not hold sends one statement, not two; and at most once a
// minute per token, also for a signed token, whose last use is not read before the write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { createTokenTouches, TOUCH_EVERY_MS } from '../../src/identity/token-touches.ts';
import { at } from '../helpers/checked.ts';
import { waitFor } from '../helpers/wait.ts';

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
    await waitFor('the batch', async () => (await lastUsed(at(users, 2).id)) !== null);
    expect(await Promise.all(users.map((u) => lastUsed(u.id)))).toEqual([
      time(9),
      time(1),
      time(2),
    ]);
  });

  it('leaves a token written less than a minute before as it is', async () => {
    const u = await newUser(t, 'f');
    const { id } = await t.db
      .selectFrom('access_tokens')
      .select('id')
      .where('user_id', '=', u.id)
      .executeTakeFirstOrThrow();
    const touches = createTokenTouches(t.db, 60_000);
    const first = new Date(Date.UTC(2031, 0, 1));
    const later = (ms: number) => new Date(first.getTime() + ms);
    for (const [use, recorded] of [
      [first, first],
      [later(TOUCH_EVERY_MS - 1000), first],
      [later(TOUCH_EVERY_MS), later(TOUCH_EVERY_MS)],
      [later(TOUCH_EVERY_MS + 30_000), later(TOUCH_EVERY_MS)],
    ] as const) {
      touches.touch(id, use);
      await touches.flush();
      expect(await lastUsed(u.id)).toEqual(recorded);
    }
  });
});
