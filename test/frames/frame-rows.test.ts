// Frame rows remembered under their version (src/frames/frame-rows.ts) are never answered
// after the frame changed: two instances on one database, each holding the frame's row, read it
// after every kind of change made through the other (settings, stop and start, env, replicas,
// deployments) or outside the row (the payer's billing, the agent's last call and edge), and both
// answer what a read without any memo answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testAppOn, testApp, type TestApp } from '../helpers/app.ts';
import { ADMIN, cloudWorld, framePath, newFrame, replicaEvents, sync } from '../helpers/frames.ts';
import { addMember, expectProblem, newTeam, newUser, share } from '../helpers/factories.ts';
import type { Role } from '../../src/db/schema.ts';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await testApp();
  b = await testAppOn(a.url);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** A frame of ann's, and a user of a team of ann's that the project is shared with. */
async function sharedFrame(
  name: string,
  teamRole: Exclude<Role, 'owner'>,
  grantRole: Exclude<Role, 'owner'>,
) {
  const { ann, project, space } = await cloudWorld(a);
  const frame = await newFrame(a, ann, project.id, space);
  const user = await newUser(a, name);
  const team = await newTeam(a, ann);
  await addMember(a, team.id, user, teamRole);
  await share(a, team.id, project.id, grantRole);
  return { ann, frame, path: framePath(frame), user, team };
}

describe('a remembered frame row', () => {
  it('is answered only while its version holds, on either instance', async () => {
    const { ann, project, space, agent } = await cloudWorld(a);
    const frame = await newFrame(a, ann, project.id, space, { replica_count: 2 });
    const path = framePath(frame);

    /** Both instances' answers, each compared with the frame read whole, without a memo. */
    const bothAgree = async (step: string) => {
      const fresh = a.services.frames.view(
        await a.services.frames.load(project.id, space, frame.id),
      );
      for (const t of [a, b]) {
        const r = await t.get(path, { token: ann.token });
        expect(r.status, `${step}: ${r.text}`).toBe(200);
        expect(r.json, step).toEqual(JSON.parse(JSON.stringify(fresh)));
      }
      return fresh;
    };
    // A frame read once is not remembered yet; read again, it is.
    await bothAgree('created');
    expect(a.services.frames.rememberedFrames()).toBe(0);
    expect(b.services.frames.rememberedFrames()).toBe(0);
    await bothAgree('read again');
    expect(a.services.frames.rememberedFrames()).toBe(1);
    expect(b.services.frames.rememberedFrames()).toBe(1);

    const steps: Array<[string, () => Promise<{ status: number; text: string }>]> = [
      ['renamed through b', () => b.patch(path, { token: ann.token, body: { name: 'api' } })],
      [
        'pulling, reported through a',
        async () => {
          await sync(a, agent.token, { events: replicaEvents(frame.id, 2, 'pulling') });
          return { status: 200, text: '' };
        },
      ],
      [
        'healthy, reported through b',
        async () => {
          await sync(b, agent.token, { events: replicaEvents(frame.id, 2, 'healthy') });
          return { status: 200, text: '' };
        },
      ],
      ['stopped through a', () => a.post(`${path}/stop`, { token: ann.token })],
      ['started through b', () => b.post(`${path}/start`, { token: ann.token })],
      ['stopped again through b', () => b.post(`${path}/stop`, { token: ann.token })],
      ['started again through a', () => a.post(`${path}/start`, { token: ann.token })],
      [
        'an env var set through b',
        () => b.patch(`${path}/env`, { token: ann.token, body: { vars: { GREETING: 'hello' } } }),
      ],
      ['deployed through a', () => a.post(`${path}/deploy`, { token: ann.token })],
      [
        'the payer past due',
        () =>
          a.put(`/v2/admin/users/${ann.id}/billing`, {
            token: ADMIN,
            body: { status: 'past_due' },
          }),
      ],
      [
        'the payer active again',
        () =>
          b.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status: 'active' } }),
      ],
      [
        'the agent calls again',
        async () => {
          await sync(b, agent.token);
          return { status: 200, text: '' };
        },
      ],
      [
        'the agent says its edge, through b',
        async () => {
          await sync(b, agent.token, { edge: { http_port: 8000, https_port: null } });
          return { status: 200, text: '' };
        },
      ],
      [
        'the agent says its edge has TLS, through a',
        async () => {
          await sync(a, agent.token, { edge: { http_port: 8000, https_port: 443 } });
          return { status: 200, text: '' };
        },
      ],
    ];
    let before = await bothAgree('before the steps');
    for (const [step, change] of steps) {
      const r = await change();
      expect(r.status, `${step}: ${r.text}`).toBeLessThan(300);
      const after = await bothAgree(step);
      expect(after, `${step} changed nothing the test can see`).not.toEqual(before);
      before = after;
    }
  });

  it('decides a stop or start only while the role and billing it remembers still hold', async () => {
    const { ann, path, user: bob, team } = await sharedFrame('bob', 'member', 'member');
    // Through a, bob's role and the frame's row are remembered (each write remembers its row).
    for (const op of ['stop', 'start', 'stop', 'start'])
      expect((await a.post(`${path}/${op}`, { token: bob.token })).status).toBe(202);

    // Through b, ann lowers bob to viewer: a's next stop must not be decided on the memo.
    const lowered = await b.patch(`/v2/teams/${team.id}/members/${bob.id}`, {
      token: ann.token,
      body: { role: 'viewer' },
    });
    expect(lowered.status, lowered.text).toBe(200);
    expectProblem(await a.post(`${path}/stop`, { token: bob.token }), 403, 'insufficient_role');
    expect((await a.get(path, { token: ann.token })).json.desired_state).toBe('running');

    // Back to member through b; then ann's billing goes past due through b: a must refuse the
    // start that its memo (billing active) would allow, and the stop must show Suspended.
    await b.patch(`/v2/teams/${team.id}/members/${bob.id}`, {
      token: ann.token,
      body: { role: 'member' },
    });
    expect((await a.post(`${path}/stop`, { token: bob.token })).status).toBe(202);
    expect((await a.post(`${path}/start`, { token: bob.token })).status).toBe(202);
    await b.put(`/v2/admin/users/${ann.id}/billing`, {
      token: ADMIN,
      body: { status: 'past_due' },
    });
    const stopped = await a.post(`${path}/stop`, { token: bob.token });
    expect(stopped.status, stopped.text).toBe(202);
    expect(stopped.json.status).toBe('Suspended');
    expectProblem(await a.post(`${path}/start`, { token: bob.token }), 402, 'billing_past_due');
    await b.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status: 'active' } });

    // Removed from the team through b: the project no longer exists for bob on a either.
    expect((await a.post(`${path}/start`, { token: bob.token })).status).toBe(202);
    const removed = await b.del(`/v2/teams/${team.id}/members/${bob.id}`, { token: ann.token });
    expect(removed.status, removed.text).toBe(204);
    expectProblem(await a.post(`${path}/stop`, { token: bob.token }), 404, 'project_not_found');
    const events = await a.get(`${path}/events?limit=100`, { token: ann.token });
    const ops = events.json.data.filter((e: { type: string }) =>
      ['stop', 'start'].includes(e.type),
    );
    expect(ops).toHaveLength(8); // 4 + stop, start, stop (suspended), start: none refused wrote
  });

  it("holds no caller's role: each reader of a remembered row gets their own", async () => {
    const { ann, frame, path, user: vic } = await sharedFrame('vic', 'admin', 'viewer');
    // The owner reads first (twice: the second read remembers the row), so the row is
    // remembered from the owner's read.
    for (let i = 0; i < 2; i++) expect((await a.get(path, { token: ann.token })).status).toBe(200);
    expect(a.services.frames.known(frame.id)).toMatchObject({
      id: frame.id,
      role: null,
      caller_access_version: -1,
      project_access_version: -1,
    });
    for (let i = 0; i < 2; i++) {
      expect((await a.get(path, { token: vic.token })).status).toBe(200);
      expectProblem(await a.post(`${path}/stop`, { token: vic.token }), 403, 'insufficient_role');
    }
    expect((await a.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
  });

  it('is not answered for another project or space than the frame is in', async () => {
    const { ann, project, space } = await cloudWorld(a);
    const frame = await newFrame(a, ann, project.id, space);
    expect((await a.get(framePath(frame), { token: ann.token })).status).toBe(200);
    const other = await a.post(`/v2/projects/${project.id}/spaces`, {
      token: ann.token,
      body: { name: 'elsewhere' },
    });
    expect(other.status, other.text).toBe(201);
    const moved = { ...frame, space_id: other.json.id };
    expect((await a.get(framePath(moved), { token: ann.token })).status).toBe(404);
  });
});
