// Sharing in the console: Ann creates a project and shares it with her team at viewer; Bob, a
// member of that team, sees it read-only (no space, sharing, frame or deploy controls, env
// values hidden) and cannot deploy; "who has access and why" explains his role. Raised to
// member he gets the Deploy button; revoked, the project is gone from his list.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addMember, newTeam, newUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { addOrgMember, newOrg, newOrgProject } from '../helpers/orgs.ts';
import { person, screenshots, signIn, consoleSuite, openProjects } from './console.ts';

const s = consoleSuite();

const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });

describe('console: projects, sharing and access', () => {
  it('shares a project at viewer: the member sees it read-only and cannot deploy', async () => {
    const annUser = await newUser(s.t, 'ann');
    const bobUser = await newUser(s.t, 'bob');
    const team = await newTeam(s.t, annUser, 'Night Shift');
    await addMember(s.t, team.id, bobUser, 'member');
    const ann = await person(s.browser, s.t.base);
    const bob = await person(s.browser, s.t.base);

    await signIn(ann.page, annUser.email);
    await openProjects(ann.page);
    await ann.page.getByText('No project yet').waitFor();
    await ann.page.getByLabel('Name', { exact: true }).fill('Shop');
    await ann.page.getByRole('button', { name: 'Create project' }).click();
    await ann.page.getByRole('heading', { name: 'Shop' }).waitFor();
    const projectId = /\/console\/projects\/([^/?#]+)/.exec(ann.page.url())?.[1] ?? '';
    await ann.page.getByRole('link', { name: 'default' }).waitFor();
    await ann.page.getByLabel('New space').fill('staging');
    await ann.page.getByRole('button', { name: 'Create space' }).click();
    await ann.page.getByRole('link', { name: 'staging' }).click();
    await ann.page.getByRole('heading', { name: 'staging' }).waitFor();
    await ann.page.getByLabel('Space name').fill('preview');
    await ann.page.getByRole('button', { name: 'Rename space' }).click();
    await ann.page.getByRole('heading', { name: 'preview' }).waitFor();
    await ann.page.getByRole('link', { name: '← Shop' }).click();
    await ann.page.getByRole('link', { name: 'preview' }).waitFor();

    await ann.page.getByLabel('Share with team').selectOption({ label: 'Night Shift' });
    await ann.page.getByLabel('At role').selectOption('viewer');
    await ann.page.getByRole('button', { name: 'Share' }).click();
    await row(ann.page, 'Night Shift').waitFor();
    await screenshots(ann.page, 'project');

    const space = await defaultSpace(s.t, annUser, projectId);
    const frame = await newFrame(s.t, annUser, projectId, space);
    const env = await s.t.patch(`${framePath(frame)}/env`, {
      token: annUser.token,
      body: { vars: { SECRET: 'hunter2' } },
    });
    expect(env.status, env.text).toBe(200);

    await ann.page.getByRole('link', { name: 'Who has access and why' }).click();
    const bobRow = row(ann.page, bobUser.email);
    await bobRow.waitFor();
    expect(await bobRow.textContent()).toContain('is member of Night Shift, which has viewer');
    expect(await row(ann.page, annUser.email).textContent()).toContain('owns the project');
    await screenshots(ann.page, 'access');

    // Bob sees the project at viewer, and no control he could not use.
    await signIn(bob.page, bobUser.email);
    await openProjects(bob.page);
    await row(bob.page, 'Shop').getByRole('cell', { name: 'viewer' }).waitFor();
    await bob.page.getByRole('link', { name: 'Shop' }).click();
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('viewer');
    await row(bob.page, 'Night Shift').waitFor();
    for (const name of ['Create space', 'Share', 'Rename', 'Delete', 'Revoke'])
      expect(await bob.page.getByRole('button', { name }).count(), name).toBe(0);
    await bob.page.getByRole('link', { name: 'default' }).click();
    await bob.page.getByRole('link', { name: 'web', exact: true }).waitFor();
    expect(await bob.page.getByRole('button', { name: 'Create frame' }).count()).toBe(0);
    await bob.page.getByRole('link', { name: 'web', exact: true }).click();
    await bob.page.getByRole('heading', { name: 'web' }).waitFor();
    // Every tab: no control a viewer could not use.
    const forbidden = [
      'Deploy',
      'Stop',
      'Start',
      'Save settings',
      'Set variable',
      'Reveal the value of SECRET',
      'Add domain',
      'Add volume',
      'Delete frame',
    ];
    for (const tab of ['Overview', 'Logs', 'Deployments', 'Settings', 'Domains', 'Volumes']) {
      await bob.page.getByRole('tab', { name: tab }).click();
      await bob.page.getByRole('tabpanel', { name: tab }).waitFor();
      for (const name of forbidden)
        expect(await bob.page.getByRole('button', { name }).count(), `${tab}: ${name}`).toBe(0);
    }
    await bob.page.getByRole('tab', { name: 'Environment' }).click();
    await bob.page.getByText('Values are hidden from viewers.').waitFor();
    expect(await row(bob.page, 'SECRET').textContent()).toContain('hidden');
    expect(await bob.page.getByText('hunter2').count()).toBe(0);
    for (const name of forbidden)
      expect(await bob.page.getByRole('button', { name }).count(), name).toBe(0);
    await screenshots(bob.page, 'frame-viewer');
    // The service agrees: a viewer's deploy is refused.
    const refused = await s.t.post(`${framePath(frame)}/deploy`, { token: bobUser.token });
    expect(refused.status).toBe(403);

    // Raised to member, Bob may deploy.
    await ann.page.getByRole('link', { name: '← Shop' }).click();
    await row(ann.page, 'Night Shift').getByLabel('Role of Night Shift').selectOption('member');
    await row(ann.page, 'Night Shift').getByRole('button', { name: 'Change' }).click();
    await expect
      .poll(
        async () =>
          (await s.t.get(`/v2/projects/${projectId}`, { token: bobUser.token })).json.role,
      )
      .toBe('member');
    await bob.page.reload();
    await bob.page.getByRole('button', { name: 'Deploy' }).waitFor();
    // The reload keeps the Environment tab; a member's values are masked until revealed.
    await bob.page.getByRole('button', { name: 'Reveal the value of SECRET' }).click();
    await expect.poll(() => row(bob.page, 'SECRET').textContent()).toContain('hunter2');

    // Revoked, the project leaves Bob's list.
    await row(ann.page, 'Night Shift').getByRole('button', { name: 'Revoke' }).click();
    await row(ann.page, 'Night Shift').getByRole('button', { name: 'Yes, revoke' }).click();
    await ann.page.getByText('Not shared with any team.').waitFor();
    await bob.page.goto('/console/projects');
    await bob.page.getByText('No project yet').waitFor();

    expect(ann.realErrors()).toEqual([]);
    expect(bob.realErrors()).toEqual([]);
    await ann.close();
    await bob.close();
  });

  it("offers an org's project to the org's admins to share, not to its members", async () => {
    const olga = await newUser(s.t, 'olga');
    const [adminUser, memberUser] = [await newUser(s.t, 'ada'), await newUser(s.t, 'max')];
    const org = await newOrg(s.t, olga, { name: 'Acme', baseRole: 'viewer' });
    await addOrgMember(s.t, org.id, adminUser, 'admin');
    await addOrgMember(s.t, org.id, memberUser, 'member');
    // Each is admin of a team of their own: what decides is the org role.
    await newTeam(s.t, adminUser, 'Ada Team');
    await newTeam(s.t, memberUser, 'Max Team');
    const project = await newOrgProject(s.t, olga, org.id, 'Acme Site');

    const ada = await person(s.browser, s.t.base);
    await signIn(ada.page, adminUser.email);
    await ada.page.goto(`/console/projects/${project.id}`);
    await ada.page.getByRole('heading', { name: 'Acme Site' }).waitFor();
    await ada.page.getByLabel('Share with team').selectOption({ label: 'Ada Team' });
    await ada.page.getByLabel('At role').selectOption('viewer');
    await ada.page.getByRole('button', { name: 'Share' }).click();
    await row(ada.page, 'Ada Team').waitFor();

    const max = await person(s.browser, s.t.base);
    await signIn(max.page, memberUser.email);
    await max.page.goto(`/console/projects/${project.id}`);
    await max.page.getByRole('heading', { name: 'Acme Site' }).waitFor();
    await row(max.page, 'Ada Team').waitFor();
    expect(await max.page.getByLabel('Share with team').count()).toBe(0);

    expect(ada.realErrors()).toEqual([]);
    expect(max.realErrors()).toEqual([]);
    await ada.close();
    await max.close();
  });
});
