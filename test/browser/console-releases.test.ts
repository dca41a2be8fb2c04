// Releases in the console (issue 36), on a cloud agent that the test plays over the agent API:
// the frame page lists the releases newest first, each with what it changed (env keys only);
// a member rolls back to an earlier one behind a question, the page follows the rollback and
// says push deploys are paused, and resumes them. A viewer reads the same list with no button.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { projectWithReaders } from '../helpers/factories.ts';
import {
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  serveAt,
  toldOf,
} from '../helpers/frames.ts';
import { closeClean, confirmed, person, screenshots, signIn, consoleSuite } from './console.ts';

const s = consoleSuite();

const SHA = (c: string) => c.repeat(40);
const rows = (page: Page) => page.locator('section:has(#deployments-title) tbody tr');
const notice = (page: Page) => page.locator('#push-deploys-paused');

describe('console: releases', () => {
  it('lists releases with their changes, rolls back to one, and resumes push deploys', async () => {
    const { ann, viewer, project } = await projectWithReaders(s.t);
    const space = await defaultSpace(s.t, ann, project.id);
    const agent = await cloudAgent(s.t);
    const frame = await newFrame(s.t, ann, project.id, space);
    const path = framePath(frame);
    /** New env, a deploy, and the agent builds `sha` and serves it. */
    const release = async (vars: Record<string, string>, sha: string) => {
      const env = await s.t.put(`${path}/env`, { token: ann.token, body: { vars } });
      expect(env.status, env.text).toBe(200);
      const r = await s.t.post(`${path}/deploy`, { token: ann.token, body: {} });
      expect(r.status, r.text).toBe(202);
      await serveAt(s.t, agent.token, frame.id, sha);
      return r.json.id as string;
    };
    const v1 = await release({ GREETING: 'hi', OLD: 'o' }, SHA('a'));
    const v2 = await release({ GREETING: 'hello', NEW: 'n' }, SHA('b'));
    // The frame page's tab of its deployments (releases).
    const page = `/console/projects/${project.id}/spaces/${space}/frames/${frame.id}?tab=deployments`;

    const annP = await person(s.browser, s.t.base);
    await signIn(annP.page, ann.email);
    await annP.page.goto(page);
    const list = rows(annP.page);
    // Newest first; the frame's creation made a deployment that never served, listed last.
    await expect.poll(() => list.nth(0).textContent()).toContain('bbbbbbb');
    expect(await list.nth(0).textContent()).toContain('aaaaaaa→bbbbbbb · env: +NEW ~GREETING −OLD');
    expect(await list.nth(1).textContent()).toContain('aaaaaaa');
    expect(await list.nth(1).textContent()).toContain('first release');
    // The serving release offers no rollback; the one before it does.
    expect(await list.nth(0).getByText('serving').count()).toBe(1);
    expect(await list.nth(0).getByRole('button', { name: 'Roll back' }).count()).toBe(0);
    expect(await notice(annP.page).count()).toBe(0);

    // The question says which env it runs with: the release's own, unless today's is checked.
    await list.nth(1).getByRole('button', { name: 'Roll back' }).click();
    await list.nth(1).getByText('Roll back to aaaaaaa with the env it ran?').waitFor();
    await annP.page.getByLabel("Roll back with today's env").check();
    await list.nth(1).getByText("Roll back to aaaaaaa with today's env?").waitFor();
    await annP.page.getByLabel("Roll back with today's env").uncheck();
    await list.nth(1).getByRole('button', { name: 'Cancel' }).click();
    await confirmed(list.nth(1), 'Roll back');

    // A new release on top: a rollback running v1's build, with v1's env.
    await expect.poll(() => list.nth(0).textContent()).toContain('rollback');
    expect(await list.nth(0).textContent()).toContain(
      `build of ${v1} · bbbbbbb→aaaaaaa · env: +OLD ~GREETING −NEW`,
    );
    const listed = (await s.t.get(`${path}/deployments`, { token: ann.token })).json.data;
    const back = listed[0];
    expect(back).toMatchObject({ trigger: 'rollback', release_of: v1, commit_sha: SHA('a') });
    expect(listed[1].id).toBe(v2);
    expect((await toldOf(s.t, agent.token, frame.id)).env).toEqual({ GREETING: 'hi', OLD: 'o' });
    await expect.poll(() => notice(annP.page).textContent()).toContain(`by rollback ${back.id}`);
    expect(await notice(annP.page).textContent()).toMatch(/^Push deploys are paused since /);
    await screenshots(annP.page, 'releases');

    // The agent serves it: v2 may now be rolled back to, the rollback itself not.
    await serveAt(s.t, agent.token, frame.id, SHA('a'));
    await list.nth(0).getByText('serving').waitFor();
    await list.nth(1).getByRole('button', { name: 'Roll back' }).waitFor();
    expect(await list.nth(0).getByRole('button', { name: 'Roll back' }).count()).toBe(0);

    // A viewer reads the list and the notice, with no button to roll back or resume.
    const vic = await person(s.browser, s.t.base);
    await signIn(vic.page, viewer.email);
    await vic.page.goto(page);
    await expect
      .poll(() => rows(vic.page).nth(1).textContent())
      .toContain('env: +NEW ~GREETING −OLD');
    await notice(vic.page).waitFor();
    expect(await vic.page.getByRole('button', { name: 'Roll back' }).count()).toBe(0);
    expect(await vic.page.getByRole('button', { name: 'Resume push deploys' }).count()).toBe(0);
    expect(await vic.page.getByRole('checkbox').count()).toBe(0);

    await annP.page.getByRole('button', { name: 'Resume push deploys' }).click();
    await expect.poll(() => notice(annP.page).count()).toBe(0);
    const resumed = (await s.t.get(path, { token: ann.token })).json.push_deploys;
    expect(resumed).toEqual({ enabled: true, paused_at: null, paused_by: null });

    // With today's env checked, a rollback runs v1's build with the env saved since.
    const saved = await s.t.put(`${path}/env`, { token: ann.token, body: { vars: { X: 'now' } } });
    expect(saved.status, saved.text).toBe(200);
    await annP.page.getByLabel("Roll back with today's env").check();
    await confirmed(list.nth(2), 'Roll back');
    await expect.poll(() => list.nth(4).count()).toBe(1);
    const told = await toldOf(s.t, agent.token, frame.id);
    expect(told.release_of).toBe(v1);
    expect(told.env).toEqual({ X: 'now' });
    await notice(annP.page).waitFor();

    await closeClean(annP, vic);
  });
});
