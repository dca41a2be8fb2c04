// One frame's bad report never costs another frame's (issue 34, item 4), end to end: the
// agent's SyncClient against the real service over a socket. A bad build report of one frame
// (a commit "hash" read from a file the tenant controls) goes with another frame's events and
// lines; a line too big for the service's body limit goes with another frame's lines. The other
// frame's events and lines are stored, in order; the bad item is not; the client goes on.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SyncClient } from '../../src/runner/client.ts';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { cloudWorld, newFrame, sync } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let url: string;
let token: string;
let a: { id: string; deployment: string };
let b: { id: string; deployment: string };

beforeAll(async () => {
  // A small body limit, so that one line of a frame is more than the service takes.
  t = await testApp({ env: { BODY_LIMIT_BYTES: String(16 * 1024) } });
  const world = await cloudWorld(t);
  token = world.agent.token;
  const fa = await newFrame(t, world.ann, world.project.id, world.space, { name: 'alpha' });
  const fb = await newFrame(t, world.ann, world.project.id, world.space, { name: 'beta' });
  const told = (await sync(t, token)).frames;
  const deployment = (id: string) => told.find((f) => f.frame_id === id)?.deployment_id as string;
  a = { id: fa.id, deployment: deployment(fa.id) };
  b = { id: fb.id, deployment: deployment(fb.id) };
  url = await listenOn(t);
});
afterAll(async () => {
  await t.close();
});

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function connected() {
  const said: any[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => said.push(JSON.parse(s)) });
  const client = new SyncClient({ server: url, token, log, onAnswer: () => {} });
  const loop = client.run();
  stops.push(() => {
    client.stop();
    return loop;
  });
  await waitFor('the sync client to connect', () => client.connected, { timeoutMs: 15_000 });
  return { client, said };
}

/** Waits until the lines stored for `frameId` are as `ok` wants them. */
const untilLines = (frameId: string, ok: (lines: string[]) => boolean) =>
  waitFor(`the lines of ${frameId} to be as awaited`, () => linesOf(frameId), {
    until: ok,
    timeoutMs: 15_000,
    everyMs: 50,
  });

const linesOf = async (frameId: string) =>
  (
    await t.db
      .selectFrom('frame_logs')
      .select('line')
      .where('frame_id', '=', frameId)
      .orderBy('id')
      .execute()
  ).map((r) => r.line);
const replicasOf = (frameId: string) =>
  t.db
    .selectFrom('frame_replicas')
    .select(['replica', 'state'])
    .where('frame_id', '=', frameId)
    .orderBy('replica')
    .execute();
const shaOf = async (deploymentId: string) =>
  (
    await t.db
      .selectFrom('deployments')
      .select('commit_sha')
      .where('id', '=', deploymentId)
      .executeTakeFirstOrThrow()
  ).commit_sha;

it("stores another frame's events and lines beside a bad build report, and goes on", async () => {
  const { client, said } = await connected();
  const at = new Date().toISOString();
  const o = client.outbox;
  // All in one tick, so one report: what the agent read of the tenant's commit marker first.
  o.build({ deployment_id: a.deployment, state: 'building', commit_sha: 'main; $(id)', at });
  o.event({ frame_id: b.id, replica: 0, type: 'healthy', deployment_id: b.deployment, at });
  o.log(b.id, 0, 'b: listening');
  o.event({ frame_id: a.id, replica: 1000, type: 'healthy', at }); // beyond the schema's 999
  o.log(b.id, 0, 'b: binary \u0000 output');

  await untilLines(b.id, (lines) => lines.length === 2);
  expect(await linesOf(b.id)).toEqual(['b: listening', 'b: binary \uFFFD output']);
  expect(await replicasOf(b.id)).toEqual([{ replica: 0, state: 'healthy' }]);
  // The bad commit is not stored; nor is the event of a replica that cannot be.
  expect(await shaOf(a.deployment)).toBeNull();
  expect(await replicasOf(a.id)).toEqual([]);
  const told = said.filter((l) => /repaired|dropped/.test(l.msg));
  expect(told).toEqual([
    expect.objectContaining({ frame_id: a.id, deployment_id: a.deployment, item: 'build' }),
    expect.objectContaining({ frame_id: a.id, item: 'event', why: expect.stringMatching(/999/) }),
  ]);

  o.log(b.id, 0, 'b: still reported');
  await untilLines(b.id, (lines) => lines.includes('b: still reported'));
});

it("drops alone a line too large for the service; another frame's lines go, in order", async () => {
  const { client, said } = await connected();
  const before = await linesOf(b.id);
  const o = client.outbox;
  const ours = Array.from({ length: 30 }, (_, i) => `b ${i}: ${'x'.repeat(1000)}`);
  for (const line of ours.slice(0, 15)) o.log(b.id, 0, line);
  o.log(a.id, 0, '€'.repeat(8000)); // valid, but 24 KB: more than one body may hold
  for (const line of ours.slice(15)) o.log(b.id, 0, line);
  o.event({ frame_id: b.id, replica: 1, type: 'starting', at: new Date().toISOString() });

  // The report goes in parts, one per frame in order of their first item: beta's lines (and
  // their halves) first, then alpha's line alone, refused and told.
  const told = () => said.filter((l) => /dropped/.test(l.msg));
  await untilLines(b.id, (lines) => lines.length === before.length + ours.length);
  await waitFor('the agent to say it dropped a line', () => told().length > 0, {
    timeoutMs: 15_000,
  });
  expect((await linesOf(b.id)).slice(before.length)).toEqual(ours);
  expect(await linesOf(a.id)).toEqual([]);
  expect(await replicasOf(b.id)).toContainEqual({ replica: 1, state: 'starting' });
  expect(told()).toEqual([
    expect.objectContaining({ frame_id: a.id, item: 'log', why: expect.stringMatching(/^413/) }),
  ]);
});
