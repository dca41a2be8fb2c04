import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newUser } from '../helpers/factories.ts';
import { ADMIN } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body, refuses the key with another body', async () => {
    const ann = await newUser(t, 'ann');
    const headers = { 'idempotency-key': 'create-project-1' };
    const first = await t.post('/v2/projects', {
      token: ann.token,
      body: { name: 'once' },
      headers,
    });
    expect(first.status).toBe(201);
    const again = await t.post('/v2/projects', {
      token: ann.token,
      body: { name: 'once' },
      headers,
    });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await t.get('/v2/projects', { token: ann.token })).json.data).toHaveLength(1);
    expectProblem(
      await t.post('/v2/projects', { token: ann.token, body: { name: 'other' }, headers }),
      422,
      'idempotency_key_reused',
    );
    // Keys belong to their caller.
    const bob = await newUser(t, 'bob');
    expect(
      (await t.post('/v2/projects', { token: bob.token, body: { name: 'once' }, headers })).json.id,
    ).not.toBe(first.json.id);
  });

  it('replays errors too, runs concurrent duplicates once, and forgets keys after 24 hours', async () => {
    const ann = await newUser(t, 'ann');
    const headers = { 'idempotency-key': 'team-x' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.post('/v2/teams', {
          token: ann.token,
          body: { name: 'X', slug: `idem-${ann.id.slice(-8).toLowerCase()}` },
          headers,
        }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.json.id)).size).toBe(1);
    expect(
      results.every(
        (r) => r.status === 201 || (r.status === 409 && r.json.code === 'idempotency_in_progress'),
      ),
    ).toBe(true);
    expect((await t.get('/v2/teams', { token: ann.token })).json.data).toHaveLength(1);

    // A refused request is kept too (validation errors are not: they never reach the handler).
    const taken = { name: 'Y', slug: `idem-${ann.id.slice(-8).toLowerCase()}` };
    const bad = await t.post('/v2/teams', {
      token: ann.token,
      body: taken,
      headers: { 'idempotency-key': 'bad-1' },
    });
    const badAgain = await t.post('/v2/teams', {
      token: ann.token,
      body: taken,
      headers: { 'idempotency-key': 'bad-1' },
    });
    expect([bad.status, badAgain.status]).toEqual([409, 409]);
    expect(badAgain.headers['idempotent-replayed']).toBe('true');
    expect(badAgain.json.code).toBe('slug_taken');

    await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 24 * 3600 + 1 } });
    const later = await t.post('/v2/teams', {
      token: ann.token,
      body: { name: 'X', slug: `idem-${ann.id.slice(-8).toLowerCase()}` },
      headers,
    });
    expectProblem(later, 409, 'slug_taken'); // ran again: the key was forgotten
  });
});
