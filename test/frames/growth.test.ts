// An attacker's cycle, repeated: save the largest env allowed, deploy, let
// the agent sync. What the service keeps must stay bounded however many cycles run: deployment
// rows per frame, the sync's decrypted-env cache (by bytes), and the size of a sync answer.
// Asserts on row counts and cache size, not on process memory (bench/growth.ts measures that).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { envMemoryBytes } from '../../src/agent-api/desired-state.ts';
import { at } from '../helpers/checked.ts';

const KEEP = 5;
const CACHE = 1024 * 1024;
let t: TestApp;
let ann: TestUser;
let agent: { id: string; token: string };
let frames: Array<{ project_id: string; space_id: string; id: string }>;

beforeAll(async () => {
  t = await testApp({
    env: { DEPLOYMENT_HISTORY: String(KEEP), ENV_CACHE_MAX_BYTES: String(CACHE) },
  });
  agent = await cloudAgent(t, 'cloud-growth');
  ann = await newUser(t, 'ann');
  const project = await newProject(t, ann, 'Growth');
  const space = await defaultSpace(t, ann, project.id);
  frames = [
    await newFrame(t, ann, project.id, space, { name: 'a' }),
    await newFrame(t, ann, project.id, space, { name: 'b' }),
  ];
});
afterAll(async () => {
  await t?.close();
});

/** The largest env the cap allows: 64 KiB of keys and values, new values every cycle. */
function maxEnv(cycle: number) {
  const cap = t.config.growth.envMaxBytes;
  const vars: Record<string, string> = {};
  for (let i = 0, left = cap; left > 0; i++) {
    const key = `K${i}`;
    const n = Math.min(30_000, left - key.length);
    vars[key] = `${cycle}-`.padEnd(n, 'x');
    left -= key.length + n;
  }
  return vars;
}

async function syncAnswer() {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/agent/sync',
    headers: { authorization: `Bearer ${agent.token}` },
    payload: {},
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

describe('the attacker cycle: largest env, deploy, sync, repeated', () => {
  it('keeps deployment rows, the env cache and sync answers bounded', async () => {
    const cycles = 30;
    let largestAnswer = 0;
    for (let c = 0; c < cycles; c++) {
      for (const f of frames) {
        const put = await t.put(`${framePath(f)}/env`, {
          token: ann.token,
          body: { vars: maxEnv(c) },
        });
        expect(put.status, put.text).toBe(200);
        expect((await t.post(`${framePath(f)}/deploy`, { token: ann.token })).status).toBe(202);
      }
      largestAnswer = Math.max(largestAnswer, (await syncAnswer()).length);
      const stats = t.services.sync.envCacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(CACHE);
    }

    // Rows: the newest KEEP deployments of each frame, however many cycles ran.
    const rows = await t.db
      .selectFrom('deployments')
      .select(({ fn }) => ['frame_id', fn.countAll<string>().as('n')])
      .groupBy('frame_id')
      .execute();
    expect(rows.map((r) => Number(r.n))).toEqual([KEEP, KEEP]);

    // The cache holds one env per frame, the latest deployment's: a new deployment replaces it.
    const stats = t.services.sync.envCacheStats();
    expect(stats.entries).toBe(frames.length);
    expect(stats.bytes).toBe(frames.length * envMemoryBytes(maxEnv(cycles - 1)));

    // A sync answer carries each frame's env once: at most the cap per frame, plus the rest.
    expect(largestAnswer).toBeLessThan(frames.length * (t.config.growth.envMaxBytes + 4096));
  });

  it('reuses the decrypted env between syncs', async () => {
    const desired = async () =>
      (await t.services.sync.desiredState(agent.id)).frames.find(
        (f) => f.frame_id === at(frames, 0).id,
      )!;
    const first = await desired();
    expect((await desired()).env).toBe(first.env); // the same object: decrypted once
    expect(first.env.K0).toMatch(/^29-/);
  });

  it('is bounded by bytes when more frames than fit sync: the rest are decrypted on each sync', async () => {
    const { project_id, space_id } = at(frames, 0);
    const more = [];
    for (let i = 0; i < 10; i++)
      more.push(await newFrame(t, ann, project_id, space_id, { name: `many-${i}` }));
    for (const f of more) {
      expect(
        (await t.put(`${framePath(f)}/env`, { token: ann.token, body: { vars: maxEnv(100) } }))
          .status,
      ).toBe(200);
      expect((await t.post(`${framePath(f)}/deploy`, { token: ann.token })).status).toBe(202);
    }
    for (let round = 0; round < 2; round++) {
      const answer = JSON.parse(await syncAnswer()) as {
        frames: Array<{ frame_id: string; env: Record<string, string> }>;
      };
      for (const f of more)
        expect(answer.frames.find((x) => x.frame_id === f.id)!.env).toEqual(maxEnv(100));
      const stats = t.services.sync.envCacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(CACHE);
      expect(stats.entries).toBeLessThanOrEqual(Math.floor(CACHE / envMemoryBytes(maxEnv(100))));
    }
  });
});
