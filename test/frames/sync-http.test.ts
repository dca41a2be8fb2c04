// The agent sync over a real socket, not inject: a request's 'close' comes as soon as its body is
// read (Node.js 16 and later), so only a real connection shows that a long poll holds, that a
// known state is answered `unchanged` only when it is, and that a client leaving ends the hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { cloudWorld, framePath, newFrame } from '../helpers/frames.ts';

let t: TestApp;
let url: string;
let token: string;
let agentId: string;
let frame: Awaited<ReturnType<typeof newFrame>>;
let ann: Awaited<ReturnType<typeof cloudWorld>>['ann'];

beforeAll(async () => {
  t = await testApp();
  const world = await cloudWorld(t);
  ann = world.ann;
  token = world.agent.token;
  agentId = world.agent.id;
  frame = await newFrame(t, ann, world.project.id, world.space);
  url = await listenOn(t);
});
afterAll(async () => {
  await t.close();
});

async function sync(query: string, body: unknown, signal?: AbortSignal) {
  const started = Date.now();
  const res = await fetch(`${url}/v2/agent/sync${query}`, {
    method: 'POST',
    // A connection per request: a keep-alive connection that fetch reuses for a request it then
    // aborts stays open on the server's side, and the test's close would wait for it.
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      connection: 'close',
    },
    body: JSON.stringify(body),
    signal,
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as {
    state: string;
    unchanged?: true;
    frames?: Array<{ frame_id: string }>;
  };
  return { answer, ms: Date.now() - started };
}

describe('the sync over HTTP', () => {
  it('answers every frame, holds ?wait, and is `unchanged` only for the current state', async () => {
    const first = await sync('', {});
    expect(first.answer.frames?.map((f) => f.frame_id)).toContain(frame.id);

    const held = await sync('?wait=2', {});
    expect(held.ms).toBeGreaterThanOrEqual(1800);
    expect(held.answer.frames?.map((f) => f.frame_id)).toContain(frame.id);

    const known = await sync('?wait=2', { known_state: first.answer.state });
    expect(known.ms).toBeGreaterThanOrEqual(1800);
    expect(known.answer).toMatchObject({ unchanged: true, state: first.answer.state });

    const waiting = sync('?wait=20', { known_state: first.answer.state });
    await t.untilHolding('frameplane_agent', agentId, 'the long poll');
    expect((await t.post(`${framePath(frame)}/stop`, { token: ann.token })).status).toBe(202);
    const woken = await waiting;
    expect(woken.ms).toBeLessThan(10_000);
    expect(woken.answer.unchanged).toBeUndefined();
    expect(woken.answer.state).not.toBe(first.answer.state);
  });

  it('ends the hold when the agent goes away, and serves the next sync as usual', async () => {
    const gone = new AbortController();
    const leaving = sync('?wait=20', {}, gone.signal).catch((err: Error) => err.name);
    await t.untilHolding('frameplane_agent', agentId, 'the long poll');
    gone.abort();
    expect(await leaving).toBe('AbortError');
    const next = await sync('', {});
    expect(next.answer.frames?.length).toBeGreaterThan(0);
  });
});
