// The total size cap of a frame's env vars: PUT and PATCH (the merged set)
// are refused past ENV_MAX_BYTES, checked under the frame's lock so parallel edits cannot pass
// it together, and a set already over the cap may still shrink.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';

const CAP = 64 * 1024; // the default
let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp();
  await cloudAgent(t, 'cloud-env-size');
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann, 'Env size');
  space = await defaultSpace(t, ann, project.id);
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const envPath = async () =>
  `${framePath(await newFrame(t, ann, project.id, space, { name: `web-${++seq}` }))}/env`;
/** `n` bytes of key and value together under key `k`. */
const sized = (k: string, n: number) => ({ [k]: 'v'.repeat(n - k.length) });

describe('the env size cap', () => {
  it('is 64 KiB of keys and values by default, for PUT and for the merged PATCH', async () => {
    const env = await envPath();
    expect(t.config.growth.envMaxBytes).toBe(CAP);
    // Exactly the cap fits (three values under the 32 KiB per-value limit).
    const full = { ...sized('A', 30_000), ...sized('B', 30_000), ...sized('C', CAP - 60_000) };
    expect((await t.put(env, { token: ann.token, body: { vars: full } })).status).toBe(200);

    // One byte more in a PATCH is refused, and says the limit and the size sent.
    const over = await t.patch(env, { token: ann.token, body: { vars: { D: '' } } });
    expectProblem(over, 422, 'env_too_large');
    expect(over.json.detail).toContain(`at most ${CAP} bytes`);
    expect(over.json.detail).toContain(`${CAP + 1} bytes`);
    expect(over.json.errors).toEqual([
      { path: 'vars', message: `would total ${CAP + 1} bytes; the limit is ${CAP}` },
    ]);

    // A PUT over the cap is refused too; UTF-8 bytes count, not characters.
    const wide = {
      ...sized('A', 30_000),
      ...sized('B', 30_000),
      C: 'é'.repeat((CAP - 60_000) / 2),
    };
    const put = await t.put(env, { token: ann.token, body: { vars: wide } });
    expectProblem(put, 422, 'env_too_large');
    expect(put.json.detail).toContain(`${CAP + 1} bytes`);

    // Nothing of the refused edits was written; replacing a value by a shorter one still works.
    expect((await t.get(env, { token: ann.token })).json.vars).toEqual(full);
    expect(
      (await t.patch(env, { token: ann.token, body: { vars: { C: 'short', D: 'x' } } })).status,
    ).toBe(200);
  });

  it('holds when parallel PATCHes each fit alone but not together', async () => {
    const env = await envPath();
    // Ten edits of 20,000 bytes each: three fit under 64 KiB, whatever the order.
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.patch(env, { token: ann.token, body: { vars: sized(`K${i}`, 20_000) } }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of replies.filter((x) => x.status === 422))
      expect(r.json.code).toBe('env_too_large');
    const saved = (await t.get(env, { token: ann.token })).json.vars as Record<string, string>;
    expect(Object.keys(saved)).toHaveLength(3);
  });

  it('lets a set saved over the cap (before it, or before it was lowered) shrink but not grow', async () => {
    const env = await envPath();
    const frameId = env.split('/').at(-2)!;
    // Written past the service, as a frame saved before the cap would be.
    const legacy = { ...sized('A', 32_000), ...sized('B', 32_000), ...sized('C', 32_000) };
    await t.db
      .insertInto('frame_env')
      .values(
        Object.entries(legacy).map(([key, v]) => ({
          frame_id: frameId,
          key,
          value_sealed: t.core.sealer.seal(v),
        })),
      )
      .execute();
    expectProblem(
      await t.patch(env, { token: ann.token, body: { vars: { D: 'x' } } }),
      422,
      'env_too_large',
    );
    // Still over the cap after the edit, but smaller: accepted.
    expect((await t.patch(env, { token: ann.token, body: { vars: { A: null } } })).status).toBe(
      200,
    );
    expect((await t.patch(env, { token: ann.token, body: { vars: { B: 'small' } } })).status).toBe(
      200,
    );
  });
});
