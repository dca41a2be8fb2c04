// A frame's replicas and latest deployment are kept on its row by triggers (migrations/0005),
// and every frame read takes them from there. After every kind of change that touches them
// (agent reports in one sync for many frames, deploys, a failed rollout, scaling, stop and
// start, a deleted frame), the row holds exactly what the source tables say.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { cloudWorld, framePath, newFrame, replicaEvents, sync } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

/** Every frame's kept summaries against the tables, compared value by value. */
async function expectSummariesExact() {
  const frames = await t.db
    .selectFrom('frames')
    .select(['id', 'replicas', 'latest_deployment', 'serving_deployment'])
    .execute();
  for (const f of frames) {
    const replicas = await t.db
      .selectFrom('frame_replicas')
      .selectAll()
      .where('frame_id', '=', f.id)
      .orderBy('replica')
      .execute();
    expect(
      f.replicas.map((r) => ({ ...r, since: Date.parse(r.since) })),
      f.id,
    ).toEqual(
      replicas.map((r) => ({
        replica: r.replica,
        generation: r.generation,
        state: r.state,
        reason: r.reason,
        deployment_id: r.deployment_id,
        since: r.since.getTime(),
      })),
    );
    for (const r of f.replicas) expect(r.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const d = await t.db
      .selectFrom('deployments')
      .selectAll()
      .where('frame_id', '=', f.id)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    expect(
      f.latest_deployment && {
        ...f.latest_deployment,
        created_at: Date.parse(f.latest_deployment.created_at),
      },
      f.id,
    ).toEqual(
      d
        ? {
            id: d.id,
            status: d.status,
            generation: d.generation,
            trigger: d.trigger,
            git_repository: d.git_repository,
            git_repository_owner: d.git_repository_owner,
            git_repository_branch: d.git_repository_branch,
            env_digest: d.env_digest,
            commit_sha: d.commit_sha,
            failure_reason: d.failure_reason,
            failure_message: d.failure_message,
            created_at: d.created_at.getTime(),
          }
        : null,
    );
    // Serving: the newest deployment a healthy replica runs (one without a deployment id runs
    // the newest deployment of its generation or before).
    const all = await t.db
      .selectFrom('deployments')
      .selectAll()
      .where('frame_id', '=', f.id)
      .orderBy('id', 'desc')
      .execute();
    const runs = replicas
      .filter((r) => r.state === 'healthy')
      .map((r) => r.deployment_id ?? all.find((x) => x.generation <= r.generation)?.id);
    const serving = all.find((x) => runs.includes(x.id));
    expect(f.serving_deployment, f.id).toEqual(
      serving ? { id: serving.id, commit_sha: serving.commit_sha } : null,
    );
  }
  return frames.length;
}

describe('replicas and the latest deployment kept on the frame row', () => {
  it('match the tables after reports, deploys, a failed rollout, scaling, stop, start and a deletion', async () => {
    const { ann, project, space, agent } = await cloudWorld(t);
    const frames = [];
    for (let i = 0; i < 4; i++)
      frames.push(
        await newFrame(t, ann, project.id, space, { name: `web-${i}`, replica_count: 2 }),
      );
    expect(await expectSummariesExact()).toBe(4);

    // One sync reports on every frame: one statement-level trigger run covers them all.
    await sync(t, agent.token, {
      events: frames.flatMap((f) => replicaEvents(f.id, 2, 'healthy')),
    });
    expect(await expectSummariesExact()).toBe(4);
    const online = await t.get(framePath(frames[0]), { token: ann.token });
    expect(online.json.status).toBe('Online');
    expect(online.json.replicas).toHaveLength(2);
    expect(online.json.latest_deployment.status).toBe('succeeded');

    const deploy = await t.post(`${framePath(frames[1])}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    await sync(t, agent.token, { events: replicaEvents(frames[1].id, 1, 'crashed') }); // the rollout fails
    // A second deploy whose build fails while the first release keeps serving, by its deployment id.
    const first = (await t.get(`${framePath(frames[0])}/deployments`, { token: ann.token })).json
      .data[0].id;
    const again = await t.post(`${framePath(frames[0])}/deploy`, { token: ann.token });
    await sync(t, agent.token, {
      builds: [
        {
          deployment_id: again.json.id,
          state: 'failed',
          commit_sha: 'abcdef1',
          message: 'npm ERR!',
        },
      ],
      events: replicaEvents(frames[0].id, 2, 'healthy', { deployment_id: first }),
    });
    expect(await expectSummariesExact()).toBe(4);
    expect(
      (await t.get(framePath(frames[0]), { token: ann.token })).json.serving.deployment_id,
    ).toBe(first);
    expect(
      (await t.get(framePath(frames[1]), { token: ann.token })).json.latest_deployment.id,
    ).toBe(deploy.json.id);

    expect(
      (await t.patch(framePath(frames[2]), { token: ann.token, body: { replica_count: 3 } }))
        .status,
    ).toBe(200);
    await sync(t, agent.token, {
      events: [{ frame_id: frames[2].id, replica: 2, type: 'pulling' }],
    });
    expect((await t.post(`${framePath(frames[3])}/stop`, { token: ann.token })).status).toBe(202);
    await sync(t, agent.token, { events: replicaEvents(frames[3].id, 2, 'stopped') });
    expect((await t.post(`${framePath(frames[3])}/start`, { token: ann.token })).status).toBe(202);
    expect(await expectSummariesExact()).toBe(4);

    const pulling = (await t.get(framePath(frames[2]), { token: ann.token })).json;
    // Scaled up: the added replica pulls while the two others serve (issue 38: not Degraded).
    expect(pulling.status).toBe('Online');
    expect(pulling.backoff.pulling_since).toMatch(/Z$/);

    expect((await t.del(framePath(frames[0]), { token: ann.token })).status).toBe(200);
    expect(await expectSummariesExact()).toBe(3);
  });
});
