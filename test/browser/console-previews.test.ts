// Previews in the console (issue 36), made by signed webhook deliveries as a git host sends
// them: a member turns previews on with a time to live on the frame page; a push to another
// branch and a pull request each make a preview that the list shows live, with its branch and
// pull request; its name opens the preview's page, which says what it previews (a link back)
// and offers no previews of its own. A viewer reads the same list with no form.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addMember, newTeam, newUser, projectWithReaders, share } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { gitHost } from '../helpers/webhooks.ts';
import { closeClean, person, screenshots, signIn, consoleSuite } from './console.ts';

const s = consoleSuite();

const SHA = (c: string) => c.repeat(40);
const section = (page: Page) => page.locator('section:has(#previews-title)');
const rows = (page: Page) => section(page).locator('tbody tr');

describe('console: previews', () => {
  it('a member turns previews on; pushes make previews, listed and linked both ways', async () => {
    const { ann, viewer, project } = await projectWithReaders(s.t);
    // A member through a team of builders: the least role that may change previews.
    const mia = await newUser(s.t, 'mia');
    const builders = await newTeam(s.t, ann, 'Builders');
    await addMember(s.t, builders.id, mia, 'member');
    await share(s.t, builders.id, project.id, 'member');
    const space = await defaultSpace(s.t, ann, project.id);
    await cloudAgent(s.t);
    const frame = await newFrame(s.t, ann, project.id, space);
    const path = framePath(frame);
    const { push, pr } = await gitHost(s.t, ann.token, project.id);
    // The frame page's tab that holds its previews.
    const page = `/console/projects/${project.id}/spaces/${space}/frames/${frame.id}?tab=deployments`;

    const miaP = await person(s.browser, s.t.base);
    await signIn(miaP.page, mia.email);
    await miaP.page.goto(page);
    const mine = section(miaP.page);
    await expect.poll(() => mine.locator('#previews-state').textContent()).toBe('off');
    expect(await mine.locator('#previews-empty').textContent()).toContain(
      "a push to another branch or a pull request against main makes one; the project's webhook must be set up",
    );
    expect(await miaP.page.locator('#preview-of').count()).toBe(0);

    await mine.getByLabel('Make previews').check();
    await mine.getByLabel('Days to live').fill('3');
    await mine.getByRole('button', { name: 'Save previews' }).click();
    await expect.poll(() => mine.locator('#previews-state').textContent()).toBe('on');
    const saved = (await s.t.get(path, { token: ann.token })).json.previews;
    expect(saved).toEqual({ enabled: true, ttl_days: 3, env_keys: [] });
    expect(await mine.textContent()).toContain('3 days without a push');

    // The frame's event stream says a preview was made: the list follows without a reload.
    const made = await push('feature/x', SHA('1'));
    expect(made.previews).toMatchObject([{ branch: 'feature/x', action: 'created' }]);
    const id = made.previews[0].frame_id as string;
    await expect.poll(() => rows(miaP.page).count()).toBe(1);
    const first = rows(miaP.page).nth(0);
    expect(await first.textContent()).toContain('web-feature/x');
    expect(await first.getByRole('cell').nth(1).textContent()).toBe('feature/x');
    expect(await first.getByRole('cell').nth(2).textContent()).toBe('-');
    await pr('opened', 7, 'fix', SHA('2'));
    await expect.poll(() => rows(miaP.page).count()).toBe(2);
    expect(await rows(miaP.page).nth(1).getByRole('cell').nth(2).textContent()).toBe('#7');
    await screenshots(miaP.page, 'previews');

    // The preview's page: a notice that links back, and no previews of its own.
    await first.getByRole('link', { name: 'web-feature/x' }).click();
    await miaP.page.waitForURL(`**/frames/${id}`);
    const notice = miaP.page.locator('#preview-of');
    await expect
      .poll(() => notice.textContent())
      .toMatch(/^Preview of web for branch feature\/x, removed .+ unless pushed to again\.$/);
    // The same page component, now for another frame: none of the parent's events stay listed.
    await miaP.page.locator('#recent-events').waitFor();
    expect(await miaP.page.locator('#recent-events').getByText('Preview created').count()).toBe(0);
    await screenshots(miaP.page, 'preview-of');
    await miaP.page.getByRole('tab', { name: 'Deployments' }).click();
    await miaP.page.locator('#deployments-title').waitFor();
    expect(await section(miaP.page).count()).toBe(0);
    await notice.getByRole('link', { name: 'web' }).click();
    await miaP.page.waitForURL(`**/frames/${frame.id}`);
    await miaP.page.getByRole('tab', { name: 'Deployments' }).click();
    await section(miaP.page).waitFor();

    // A viewer reads the settings and the list, with no form to change them.
    const vic = await person(s.browser, s.t.base);
    await signIn(vic.page, viewer.email);
    await vic.page.goto(page);
    await expect.poll(() => rows(vic.page).count()).toBe(2);
    expect(await section(vic.page).locator('#previews-state').textContent()).toBe('on');
    expect(await rows(vic.page).nth(0).textContent()).toContain('feature/x');
    expect(await vic.page.getByRole('button', { name: 'Save previews' }).count()).toBe(0);
    expect(await vic.page.getByLabel('Make previews').count()).toBe(0);

    await closeClean(miaP, vic);
  });
});
