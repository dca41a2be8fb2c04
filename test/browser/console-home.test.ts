// The console outside the frame page (issue 38): the home page as a dashboard (the first step
// for someone with nothing; then frames across projects, recent activity, and invitations
// answered in place), the project page (frames per space, the danger zone last), back links
// named after where they lead, and the team form's slug made from the name. Every page at
// desktop and phone widths, with no console error and no failed request.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { newTeam, newUser } from '../helpers/factories.ts';
import { serveAt, sync } from '../helpers/frames.ts';
import { failedRequests } from './browser.ts';
import {
  asPhone,
  closeClean,
  consoleSuite,
  overflow,
  person,
  screenshots,
  signUp,
  tokenOf,
  unique,
} from './console.ts';

const s = consoleSuite();

/** The page at both widths, none wider than its screen. */
async function shots(page: Page, name: string) {
  await asPhone(page);
  expect(await overflow(page), name).toBe(0);
  await screenshots(page, name);
}

describe('console: home, project page, back links, team slug', () => {
  it('leads a newcomer from the first step to a dashboard of frames, activity and invitations', async () => {
    const email = unique('ann');
    const ann = await person(s.browser, s.t.base);
    const failed = failedRequests(ann.page);
    await signUp(ann.page, email, 'Ann');

    // Nothing yet: the first step, plainly.
    const first = ann.page.getByRole('link', { name: 'Create your first project' });
    await first.waitFor();
    await shots(ann.page, 'dashboard-empty');
    await first.click();
    await ann.page.getByLabel('Name', { exact: true }).fill('Web Shop');
    await ann.page.getByRole('button', { name: 'Create project' }).click();
    await ann.page.getByRole('heading', { name: 'Web Shop' }).waitFor();
    const projectId = /\/console\/projects\/([^/?#]+)/.exec(ann.page.url())?.[1] ?? '';

    // A frame on a self-hosted agent that serves an edge, made through the API.
    const token = (await tokenOf(ann.page)) ?? '';
    const me = (await s.t.get('/v2/user', { token })).json;
    const spaces = (await s.t.get(`/v2/projects/${projectId}/spaces`, { token })).json.data;
    const agent = await s.t.post(`/v2/projects/${projectId}/agents`, {
      token,
      body: { name: 'box' },
    });
    expect(agent.status, agent.text).toBe(201);
    await sync(s.t, agent.json.token, { edge: { http_port: 8000, https_port: null } });
    const frame = await s.t.post(`/v2/projects/${projectId}/spaces/${spaces[0].id}/frames`, {
      token,
      body: {
        name: 'storefront',
        owner_id: me.id,
        git_repository: 'shop',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
        agent_id: agent.json.id,
      },
    });
    expect(frame.status, frame.text).toBe(201);
    await serveAt(s.t, agent.json.token, frame.json.id, 'a'.repeat(40));
    const { url } = (await s.t.get(`/v2/projects/${projectId}/frames`, { token })).json.data[0];
    expect(url).toMatch(/^http:\/\/storefront-/);

    // The project page lists the frames of each space; what cannot be undone is last.
    await ann.page.reload();
    const listed = ann.page.getByRole('row').filter({ hasText: 'storefront' });
    await listed.getByText('Online').waitFor();
    await listed.getByRole('link', { name: url }).waitFor();
    const headings = await ann.page.locator('main h2').allTextContents();
    expect(headings.at(0)).toBe('Spaces and frames');
    expect(headings.at(-1)).toBe('Danger zone');
    const danger = ann.page.locator('section.danger-zone');
    await danger.getByRole('button', { name: 'Delete project' }).waitFor();
    await danger.getByRole('button', { name: 'Delete space default' }).waitFor();
    await shots(ann.page, 'project-frames');

    // Back links say where they lead.
    await ann.page.getByRole('link', { name: 'default', exact: true }).click();
    await ann.page.getByRole('heading', { name: 'default' }).waitFor();
    await shots(ann.page, 'space-frames');
    await ann.page.getByRole('link', { name: '← Web Shop' }).click();
    await ann.page.getByRole('link', { name: 'Who has access and why' }).click();
    await ann.page.getByRole('heading', { name: 'Who has access and why' }).waitFor();
    await ann.page.getByRole('link', { name: '← Web Shop' }).click();
    await ann.page.getByRole('heading', { name: 'Web Shop' }).waitFor();

    // The team form: the slug follows the name, as the CLI makes it, until it is typed.
    await ann.page.getByRole('link', { name: 'Teams' }).first().click();
    const name = ann.page.getByLabel('Name', { exact: true });
    const slug = ann.page.getByLabel('Slug');
    await name.fill('Crème Shift!');
    expect(await slug.inputValue()).toBe('creme-shift');
    await slug.fill('nights');
    await name.fill('Night Shift');
    expect(await slug.inputValue()).toBe('nights');
    await shots(ann.page, 'teams-slug');
    await ann.page.getByRole('button', { name: 'Create team' }).click();
    await ann.page.getByRole('heading', { name: 'Night Shift' }).waitFor();
    expect(await ann.page.locator('#team-slug').textContent()).toBe('nights');

    // Two invitations to her proven address: one accepted, one declined, in place.
    const bob = await newUser(s.t, 'bob');
    const design = await newTeam(s.t, bob, 'Design');
    const ops = await newTeam(s.t, bob, 'Ops');
    await s.t.db
      .updateTable('users')
      .set({ email_verified_at: s.t.clock.now() })
      .where('id', '=', me.id)
      .execute();
    for (const team of [design, ops]) {
      const r = await s.t.post(`/v2/teams/${team.id}/invitations`, {
        token: bob.token,
        body: { email, role: 'member' },
      });
      expect(r.status, r.text).toBe(201);
    }
    await ann.page.getByRole('link', { name: 'Frameplane' }).click();
    await ann.page.reload(); // her proven address, read afresh
    const invitations = ann.page.locator('section', { hasText: 'Invitations for you' });
    const design_ = invitations.getByRole('listitem').filter({ hasText: 'Design' });
    await design_.waitFor();
    // The dashboard: her frame with its status and URL, and what happened, newest first.
    const frames = ann.page.locator('section', { hasText: 'Your frames' });
    await frames.getByRole('row').filter({ hasText: 'storefront' }).getByText('Online').waitFor();
    await frames.getByRole('link', { name: url }).waitFor();
    await frames.getByRole('link', { name: 'Web Shop' }).waitFor();
    const activity = ann.page.locator('section', { hasText: 'Recent activity' });
    await activity.getByText('frame created').first().waitFor();
    await activity.getByRole('link', { name: 'Night Shift' }).first().waitFor();
    await shots(ann.page, 'dashboard');

    await design_.getByRole('button', { name: 'Accept' }).click();
    await invitations.getByRole('status').getByRole('link', { name: 'Design' }).waitFor();
    await invitations
      .getByRole('listitem')
      .filter({ hasText: 'Ops' })
      .getByRole('button', { name: 'Decline' })
      .click();
    await expect.poll(() => invitations.getByRole('listitem').count()).toBe(0);
    const teams = (await s.t.get('/v2/teams', { token })).json.data.map((t: any) => t.name);
    expect(teams.sort()).toEqual(['Design', 'Night Shift']);
    await shots(ann.page, 'dashboard-joined');
    await invitations.getByRole('link', { name: 'Design' }).click();
    await expect.poll(() => ann.page.locator('#my-role').textContent()).toBe('member');

    expect(failed).toEqual([]);
    await closeClean(ann);
  });
});
