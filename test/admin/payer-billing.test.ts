// A project's copy of its payer's billing status (projects.payer_billing, migrations/0021), which
// frame reads, stops and starts and the agents' desired state go by: it is the payer's after a
// billing change, a transfer and a new project, whatever a write says, and under billing changes
// racing transfers to and from their payers and new projects.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { cloudAgent } from '../helpers/frames.ts';
import { newOrg, newOrgProject } from '../helpers/orgs.ts';
import { moveProject, runningProject, setBilling } from './world.ts';

let t: TestApp;
let agent: { id: string; token: string };
beforeAll(async () => {
  t = await testApp();
  agent = await cloudAgent(t);
});
afterAll(async () => {
  await t.close();
});

const copyOf = async (projectId: string) =>
  (
    await t.db
      .selectFrom('projects')
      .select('payer_billing')
      .where('id', '=', projectId)
      .executeTakeFirstOrThrow()
  ).payer_billing;

/** The projects among `ids` whose copy is not their payer's status. */
async function stale(ids: string[]) {
  const { rows } = await sql<{ id: string }>`select p.id from projects p
    left join users u on u.id = p.owner_id left join teams o on o.id = p.org_id
    where p.id = any(${ids}::text[])
      and p.payer_billing <> coalesce(u.billing_status, o.billing_status)`.execute(t.db);
  return rows.map((r) => r.id);
}

describe('projects.payer_billing', () => {
  it('follows billing changes, transfers and new projects, for a user or an org that pays', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann);
    const own = await newProject(t, ann);
    const orgs = await newOrgProject(t, ann, org.id);
    expect([await copyOf(own.id), await copyOf(orgs.id)]).toEqual(['active', 'active']);

    expect((await setBilling(t, 'users', ann.id, 'past_due')).status).toBe(200);
    // The org pays for its projects, not its owner.
    expect([await copyOf(own.id), await copyOf(orgs.id)]).toEqual(['past_due', 'active']);
    expect(await copyOf((await newProject(t, ann, 'Later')).id)).toBe('past_due');

    expect((await setBilling(t, 'orgs', org.id, 'past_due')).status).toBe(200);
    expect(await copyOf(orgs.id)).toBe('past_due');
    expect((await moveProject(t, own.id, { user_id: bob.id })).status).toBe(200);
    expect(await copyOf(own.id)).toBe('active');
    expect((await moveProject(t, own.id, { org_id: org.id })).status).toBe(200);
    expect(await copyOf(own.id)).toBe('past_due');
    expect((await setBilling(t, 'orgs', org.id, 'active')).status).toBe(200);
    expect([await copyOf(own.id), await copyOf(orgs.id)]).toEqual(['active', 'active']);
  });

  it('is the payer’s whatever a write says', async () => {
    const ann = await newUser(t, 'ann');
    const p = await newProject(t, ann);
    await t.db
      .updateTable('projects')
      .set({ payer_billing: 'past_due' })
      .where('id', '=', p.id)
      .execute();
    expect(await copyOf(p.id)).toBe('active');
  });

  it('is the payer’s after billing changes race transfers to and from the payers and new projects', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann);
    const payers = [{ user_id: ann.id }, { user_id: bob.id }, { org_id: org.id }];
    const projects = [
      (await runningProject(t, ann, agent, 1)).project,
      (await runningProject(t, ann, agent, 1)).project,
      ...(await Promise.all([1, 2, 3, 4].map((i) => newProject(t, ann, `P${i}`)))),
    ];
    const ids = projects.map((p) => p.id);
    for (let round = 0; round < 6; round++) {
      const status = round % 2 ? 'active' : 'past_due';
      const created = [1, 2, 3].map((i) =>
        t.post('/v2/projects', {
          token: ann.token,
          body: { name: `N${round}-${i}`, ...(i === 3 ? { org_id: org.id } : {}) },
        }),
      );
      const answers = await Promise.all([
        setBilling(t, 'users', ann.id, status),
        ...projects.map((p, i) => moveProject(t, p.id, payers[(round + i) % payers.length] ?? {})),
        setBilling(t, 'orgs', org.id, status),
        setBilling(t, 'users', bob.id, round % 3 ? 'active' : 'past_due'),
      ]);
      for (const a of answers) expect(a.status, a.text).toBe(200);
      for (const c of await Promise.all(created)) {
        expect(c.status, c.text).toBe(201);
        ids.push((c.json as { id: string }).id);
      }
      expect(await stale(ids)).toEqual([]);
    }
  });
});
