// Operator billing of an organization (CONTRACT 3a, 7): past_due suspends the frames of the
// projects the org owns, and only those; active restores them; a user's billing no longer
// reaches the projects of an org that user owns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newTeam, newUser } from '../helpers/factories.ts';
import { ADMIN, cloudAgent, framePath } from '../helpers/frames.ts';
import { newOrg } from '../helpers/orgs.ts';
import {
  billingEvents,
  desiredOnAgent,
  expectRestored,
  expectSuspended,
  frameRow,
  moveProject,
  runningProject,
  setBilling,
} from './world.ts';

let t: TestApp;
let agent: { id: string; token: string };
beforeAll(async () => {
  t = await testApp();
  agent = await cloudAgent(t);
});
afterAll(async () => {
  await t.close();
});

const bill = (kind: 'orgs' | 'users', id: string, status: string, token = ADMIN) =>
  setBilling(t, kind, id, status, token);

/** An org of `ann` owning a running project, and a project `ann` owns herself. */
async function world() {
  const ann = await newUser(t, 'ann');
  const org = await newOrg(t, ann);
  const orgProject = await runningProject(t, ann, agent, 2);
  const moved = await moveProject(t, orgProject.project.id, { org_id: org.id });
  expect(moved.status, moved.text).toBe(200);
  const own = await runningProject(t, ann, agent, 1);
  // Another org's project: an org's billing must not reach it.
  const other = await runningProject(t, ann, agent, 1);
  await moveProject(t, other.project.id, { org_id: (await newOrg(t, ann)).id });
  return {
    ann,
    org,
    orgFrames: orgProject.frames,
    ownFrames: own.frames,
    otherFrames: other.frames,
  };
}

describe('PUT /v2/admin/orgs/<org_id>/billing', () => {
  it("past_due suspends the frames of the org's projects only; active restores them", async () => {
    const { org, orgFrames, ownFrames, otherFrames } = await world();
    const r = await bill('orgs', org.id, 'past_due');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ org_id: org.id, status: 'past_due', frames_affected: 2 });
    const row = await t.db
      .selectFrom('teams')
      .select('billing_status')
      .where('id', '=', org.id)
      .executeTakeFirstOrThrow();
    expect(row.billing_status).toBe('past_due');

    await expectSuspended(t, agent, orgFrames);
    const desired = await desiredOnAgent(t, agent);
    for (const f of [...ownFrames, ...otherFrames]) {
      expect((await frameRow(t, f.id)).last_status).toBe('Online');
      expect(desired[f.id]).toBe('running');
    }

    // Setting the same status again moves nothing.
    expect((await bill('orgs', org.id, 'past_due')).json.frames_affected).toBe(0);

    const back = await bill('orgs', org.id, 'active');
    expect(back.json).toEqual({ org_id: org.id, status: 'active', frames_affected: 2 });
    await expectRestored(t, agent, orgFrames);
    expect(await billingEvents(t, orgFrames[0]?.id ?? '')).toEqual(['suspended', 'restored']);
  });

  it('keeps a stopped frame stopped across suspension and restore', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    const { project, frames } = await runningProject(t, ann, agent, 2);
    const [stopped, running] = frames;
    const stop = await t.post(`${framePath(stopped)}/stop`, { token: ann.token });
    expect(stop.status, stop.text).toBe(202);
    await moveProject(t, project.id, { org_id: org.id });
    await bill('orgs', org.id, 'past_due');
    await bill('orgs', org.id, 'active');
    const desired = await desiredOnAgent(t, agent);
    expect(desired[stopped.id]).toBe('stopped');
    expect(desired[running.id]).toBe('running');
    expect((await frameRow(t, stopped.id)).desired_state).toBe('stopped');
  });

  it("a user's billing leaves the projects of the orgs they own alone", async () => {
    const { ann, orgFrames, ownFrames } = await world();
    const r = await bill('users', ann.id, 'past_due');
    expect(r.json).toEqual({ user_id: ann.id, status: 'past_due', frames_affected: 1 });
    const desired = await desiredOnAgent(t, agent);
    for (const f of ownFrames) expect(desired[f.id]).toBe('stopped');
    for (const f of orgFrames) {
      expect(desired[f.id]).toBe('running');
      expect((await frameRow(t, f.id)).last_status).toBe('Online');
    }
    await bill('users', ann.id, 'active');
  });

  it('answers 404 for an unknown org or a team, 422 for a bad status, 401 without ADMIN_TOKEN', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    const team = await newTeam(t, ann);
    expectProblem(await bill('orgs', 'org_01NOSUCHORG', 'past_due'), 404, 'org_not_found');
    expectProblem(await bill('orgs', team.id, 'past_due'), 404);
    expectProblem(await bill('orgs', org.id, 'overdue'), 422);
    expectProblem(await bill('orgs', org.id, 'past_due', ann.token), 401);
    const row = await t.db
      .selectFrom('teams')
      .select('billing_status')
      .where('id', '=', org.id)
      .executeTakeFirstOrThrow();
    expect(row.billing_status).toBe('active');
  });
});
