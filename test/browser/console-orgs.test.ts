// The console's organizations, two people in two browsers: Ann creates an org and invites Bob
// by e-mail (the link from a message caught by a real SMTP server); Bob signs up on the
// invitation page, accepts, and lands on the org's page as a member, with no admin control.
// Ann creates a project owned by the org; Bob reaches it with the org's base role, read-only,
// and then as member once Ann raises the base role. Ann makes Bob an admin and both pages show
// it. At the end Bob leaves, and Ann's delete is refused while the org owns the project.
import { describe, expect, it } from 'vitest';
import {
  annAndBob,
  asPhone,
  changeRole,
  closeClean,
  confirmed,
  createGroup,
  invite,
  joinByLink,
  mailingConsoleSuite,
  overflow,
  roleOf,
  row,
  screenshots,
  tokenOf,
  unique,
} from './console.ts';

const s = mailingConsoleSuite();

describe('console: organizations', () => {
  it('invites a member, who reaches the org project at its base role; the owner promotes them', async () => {
    // Long enough to be cut at phone width.
    const annEmail = unique('ann.with-an-address-longer-than-a-phone');
    const { ann, bob, bobEmail } = await annAndBob(s, annEmail);

    await ann.page.getByRole('link', { name: 'Orgs' }).click();
    await ann.page.getByText('You are in no organization yet.').waitFor();
    await createGroup(ann.page, 'Acme Works', 'acme-works', 'Create organization');
    expect(await ann.page.locator('#my-role').textContent()).toBe('owner');
    expect(await ann.page.locator('#base-role').textContent()).toBe('viewer');
    const orgId = /\/console\/orgs\/([^/?#]+)/.exec(ann.page.url())?.[1] ?? '';

    // An org gives member or admin, never viewer.
    const roles = ann.page.getByLabel('Role', { exact: true }).locator('option');
    expect(await roles.allTextContents()).toEqual(['member', 'admin']);
    await invite(ann.page, bobEmail);

    // Bob follows the e-mailed link into the org's page.
    await joinByLink(bob.page, await s.invitationLink(bobEmail));
    await bob.page.waitForURL(`**/console/orgs/${orgId}`);
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('member');
    await expect.poll(() => bob.page.locator('#signed-in-as').textContent()).toBe(bobEmail);
    // A member manages nothing: no roles, invitations, name, base role, delete, new project.
    for (const name of ['Change', 'Remove', 'Save', 'Save base role', 'Delete organization'])
      expect(await bob.page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    for (const name of ['Invitations', 'Name and slug', "Members' role on its projects"])
      expect(await bob.page.getByRole('heading', { name }).count(), name).toBe(0);
    expect(await bob.page.getByRole('link', { name: /New project/ }).count()).toBe(0);
    await bob.page.getByRole('button', { name: 'Leave organization' }).waitFor();
    await screenshots(bob.page, 'org-member');
    await bob.page.getByRole('link', { name: 'Orgs' }).click();
    await row(bob.page, 'Acme Works').getByRole('cell', { name: 'member' }).waitFor();

    // Ann creates a project of the org, from the org page's link (the owner is preselected).
    await ann.page.reload();
    await row(ann.page, bobEmail).getByText('accepted').waitFor();
    await ann.page.getByRole('link', { name: 'New project of Acme Works' }).click();
    expect(await ann.page.getByLabel('Owner').inputValue()).toBe(orgId);
    await ann.page.getByLabel('Name', { exact: true }).fill('Acme Site');
    await screenshots(ann.page, 'projects-new');
    await ann.page.getByRole('button', { name: 'Create project' }).click();
    await ann.page.getByRole('heading', { name: 'Acme Site' }).waitFor();
    const projectId = /\/console\/projects\/([^/?#]+)/.exec(ann.page.url())?.[1] ?? '';
    await expect
      .poll(() => ann.page.locator('#project-owner').textContent())
      .toBe('the organization Acme Works');
    const annToken = (await tokenOf(ann.page)) ?? '';
    const made = await s.t.get(`/v2/projects/${projectId}`, { token: annToken });
    expect(made.json).toMatchObject({ owner_kind: 'org', owner_id: orgId, role: 'owner' });

    // Bob sees it with the org's base role, viewer: read-only, no admin control.
    // (A fresh load: his list, read on the org page, is cached for a few seconds.)
    await bob.page.goto('/console/projects');
    await row(bob.page, 'Acme Site').getByRole('cell', { name: 'viewer' }).waitFor();
    expect(await bob.page.getByLabel('Owner').count()).toBe(0);
    await row(bob.page, 'Acme Site').getByRole('link', { name: 'Acme Works' }).waitFor();
    await bob.page.getByRole('link', { name: 'Acme Site' }).click();
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('viewer');
    for (const name of ['Create space', 'Share', 'Rename', 'Delete', 'Register agent'])
      expect(await bob.page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await bob.page.getByLabel('Share with team').count()).toBe(0);
    await screenshots(bob.page, 'org-project-viewer');
    // The owner's name leads to the org's page.
    await bob.page.locator('#project-owner').getByRole('link', { name: 'Acme Works' }).click();
    await bob.page.waitForURL(`**/console/orgs/${orgId}`);
    await bob.page.getByRole('link', { name: 'Acme Site' }).waitFor();
    // The service agrees: a member creates no project of the org.
    const bobToken = (await tokenOf(bob.page)) ?? '';
    const refused = await s.t.post('/v2/projects', {
      token: bobToken,
      body: { name: 'Mine', org_id: orgId },
    });
    expect(refused.status).toBe(403);

    // Ann raises the base role: Bob is member of the project.
    await ann.page.goto(`/console/orgs/${orgId}`);
    await ann.page.getByLabel('Base role').selectOption('member');
    await ann.page.getByRole('button', { name: 'Save base role' }).click();
    await expect.poll(() => ann.page.locator('#base-role').textContent()).toBe('member');
    await expect
      .poll(async () => (await s.t.get(`/v2/projects/${projectId}`, { token: bobToken })).json.role)
      .toBe('member');

    // Ann makes Bob an admin; her page shows it, and his.
    await changeRole(ann.page, bobEmail, 'admin');
    await expect.poll(() => roleOf(s.t, `/v2/orgs/${orgId}`, annToken, bobEmail)).toBe('admin');
    await ann.page.reload();
    const bobsRole = row(ann.page, bobEmail).first().getByLabel(`Role of ${bobEmail}`);
    await expect.poll(() => bobsRole.inputValue()).toBe('admin');
    await screenshots(ann.page, 'org');
    await bob.page.reload();
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('admin');
    await bob.page.getByRole('heading', { name: 'Invitations' }).waitFor();

    // At phone width the header's address is cut with an ellipsis (whole in its title), and
    // nothing is wider than the screen.
    await asPhone(ann.page);
    const address = ann.page.locator('#signed-in-as');
    expect(await address.getAttribute('title')).toBe(annEmail);
    // One line, cut: its text is wider than its box, which is no taller than a line.
    expect(await address.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    const [height, line] = await address.evaluate((e) => [
      e.getBoundingClientRect().height,
      Number.parseFloat(getComputedStyle(e).lineHeight),
    ]);
    expect(height).toBeLessThan(1.5 * (line ?? 0));
    expect(await overflow(ann.page)).toBe(0);

    await ann.page.getByRole('link', { name: 'Orgs' }).click();
    await row(ann.page, 'Acme Works').getByRole('cell', { name: '2', exact: true }).waitFor();
    await screenshots(ann.page, 'orgs');

    // Bob leaves. Ann cannot delete the org while it owns the project: the service says why.
    await confirmed(bob.page, 'Leave organization');
    await bob.page.waitForURL('**/console/orgs');
    await bob.page.getByText('You are in no organization yet.').waitFor();
    await ann.page.getByRole('link', { name: 'Acme Works' }).click();
    await confirmed(ann.page, 'Delete organization');
    await ann.page.getByRole('alert').filter({ hasText: 'still owns projects' }).waitFor();

    await closeClean(ann, bob);
  });
});
