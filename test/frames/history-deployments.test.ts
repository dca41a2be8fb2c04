// Bounded deployment history: a frame keeps its newest DEPLOYMENT_HISTORY
// deployments, pruned in the transaction that adds one, and never loses one still in use: the
// one in progress, the serving one, or one a replica reports running. The list's cursors stay
// valid while rows go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import {
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  sync,
} from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

const KEEP = 5;
let t: TestApp;
let ann: TestUser;
let agent: { id: string; token: string };
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp({ env: { DEPLOYMENT_HISTORY: String(KEEP) } });
  agent = await cloudAgent(t, 'cloud-history');
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann, 'History');
  space = await defaultSpace(t, ann, project.id);
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const frame = (extra: Record<string, unknown> = {}) =>
  newFrame(t, ann, project.id, space, { name: `web-${++seq}`, ...extra });
const stored = async (frameId: string) =>
  await t.db
    .selectFrom('deployments')
    .select(['id', 'generation', 'status'])
    .where('frame_id', '=', frameId)
    .orderBy('id', 'desc')
    .execute();
async function deploy(f: { project_id: string; space_id: string; id: string }) {
  const r = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
  expect(r.status, r.text).toBe(202);
  return r.json.id as string;
}

describe('deployment history', () => {
  it('keeps the newest DEPLOYMENT_HISTORY deployments, whatever made them', async () => {
    const f = await frame();
    const made = [at(await stored(f.id), 0).id];
    for (let i = 0; i < 12; i++) {
      if (i % 3 === 2) {
        // A port change of a running frame re-rolls it: a deployment too.
        expect(
          (await t.patch(framePath(f), { token: ann.token, body: { port: 9000 + i } })).status,
        ).toBe(200);
        made.push(at(await stored(f.id), 0).id);
      } else {
        made.push(await deploy(f));
      }
    }
    const left = await stored(f.id);
    expect(left.map((d) => d.id)).toEqual(made.slice(-KEEP).reverse());
    expect(at(left, 0).status).toBe('in_progress');
    const list = await t.get(`${framePath(f)}/deployments`, { token: ann.token });
    expect(list.json.data.map((d: { id: string }) => d.id)).toEqual(made.slice(-KEEP).reverse());
    expect((await t.get(framePath(f), { token: ann.token })).json.latest_deployment.id).toBe(
      made.at(-1),
    );
  });

  it('never prunes the serving deployment nor one a replica runs', async () => {
    const f = await frame({ replica_count: 4 });
    const created = at(await stored(f.id), 0);
    // Three replicas serve the first release; the fourth has not reported yet.
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 3, 'healthy', { deployment_id: created.id }),
    });
    const more: string[] = [];
    for (let i = 0; i < 5; i++) more.push(await deploy(f));
    const gen = (await stored(f.id)).find((d) => d.id === more[3])!.generation;
    // Replica 3 crashed running more[1] (a newer release's report never replaces a row of the
    // serving one: takeover.ts); replica 2 reports an old generation without a deployment id, so
    // it runs the newest deployment of that generation or before: more[3].
    await sync(t, agent.token, {
      events: [
        { frame_id: f.id, replica: 3, type: 'crashed', deployment_id: more[1] },
        { frame_id: f.id, replica: 2, type: 'starting', generation: gen },
      ],
    });
    for (let i = 0; i < 10; i++) more.push(await deploy(f));

    const left = (await stored(f.id)).map((d) => d.id);
    expect(left).toEqual([...more.slice(-KEEP).reverse(), more[3], more[1], created.id]);
    const read = (await t.get(framePath(f), { token: ann.token })).json;
    expect(read.serving.deployment_id).toBe(created.id);

    // Once no replica runs them, the old ones go with the next deployment; the serving one stays.
    await sync(t, agent.token, {
      events: [
        { frame_id: f.id, replica: 3, type: 'healthy', deployment_id: created.id },
        { frame_id: f.id, replica: 2, type: 'healthy', deployment_id: created.id },
      ],
    });
    more.push(await deploy(f));
    expect((await stored(f.id)).map((d) => d.id)).toEqual([
      ...more.slice(-KEEP).reverse(),
      created.id,
    ]);
  });

  it('keeps the list cursors valid while older rows are pruned', async () => {
    const f = await frame();
    for (let i = 0; i < KEEP; i++) await deploy(f);
    const path = `${framePath(f)}/deployments`;
    const first = await t.get(`${path}?limit=2`, { token: ann.token });
    expect(first.json.data).toHaveLength(2);
    expect(first.json.next_cursor).not.toBeNull();
    // Three more deployments prune the three oldest, which the next pages would have shown.
    for (let i = 0; i < 3; i++) await deploy(f);
    expect(await stored(f.id)).toHaveLength(KEEP);
    const seen: string[] = first.json.data.map((d: { id: string }) => d.id);
    let cursor: string | null = first.json.next_cursor;
    while (cursor) {
      const page = await t.get(`${path}?limit=2&cursor=${encodeURIComponent(cursor)}`, {
        token: ann.token,
      });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.json.data.map((d: { id: string }) => d.id));
      cursor = page.json.next_cursor;
    }
    // What the pages showed after the first one is exactly what is still stored before it.
    const older = (await stored(f.id)).map((d) => d.id).filter((id) => id < at(seen, 1));
    expect(seen.slice(2)).toEqual(older);
    expect(new Set(seen).size).toBe(seen.length);
  });
});
