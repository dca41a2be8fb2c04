// The console's teams, two people in two browsers: Ann creates a team and invites Bob; the link
// comes from an e-mail caught by a real SMTP server; Bob signs up on the invitation page,
// accepts, and follows it into the console. Ann changes his role, and sends, resends and revokes
// another invitation; at the end Bob leaves and Ann deletes the team.
import { describe, expect, it } from 'vitest';
import {
  annAndBob,
  changeRole,
  closeClean,
  confirmed,
  createGroup,
  invite,
  joinByLink,
  mailingConsoleSuite,
  roleOf,
  row,
  screenshots,
  tokenOf,
  unique,
} from './console.ts';

const s = mailingConsoleSuite();
const { invitationLink } = s;

describe('console: teams and invitations', () => {
  it('invites a second person, who accepts in another browser and lands in the console', async () => {
    const { ann, bob, bobEmail } = await annAndBob(s, unique('ann'));

    await ann.page.getByRole('link', { name: 'Teams' }).first().click();
    await ann.page.getByLabel('Name', { exact: true }).fill('Night Shift');
    await ann.page.getByLabel('Slug').fill('night-shift!');
    await ann.page.getByRole('button', { name: 'Create team' }).click();
    // The slug's rule is shown under the slug field.
    const slug = ann.page.getByLabel('Slug');
    await expect.poll(() => slug.getAttribute('aria-invalid')).toBe('true');
    expect(await ann.page.locator('.field-error').textContent()).toContain('lowercase letters');
    await createGroup(ann.page, 'Night Shift', 'night-shift', 'Create team');
    expect(await ann.page.locator('#my-role').textContent()).toBe('owner');
    const teamId = /\/console\/teams\/([^/?#]+)/.exec(ann.page.url())?.[1];

    await invite(ann.page, bobEmail, 'member');
    await screenshots(ann.page, 'team');

    // Bob, in his own browser, follows the e-mailed link and signs up with the invited address.
    await joinByLink(bob.page, await invitationLink(bobEmail));
    await bob.page.waitForURL(`**/console/teams/${teamId}`);
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('member');
    await expect.poll(() => bob.page.locator('#signed-in-as').textContent()).toBe(bobEmail);
    // A member manages nothing: no role controls, no invitations, no delete.
    expect(await bob.page.getByRole('button', { name: 'Change' }).count()).toBe(0);
    expect(await bob.page.getByRole('heading', { name: 'Invitations' }).count()).toBe(0);
    expect(await bob.page.getByRole('button', { name: 'Delete team' }).count()).toBe(0);

    // Ann sees him join, and makes him an admin.
    await ann.page.reload();
    await row(ann.page, bobEmail).getByText('accepted').waitFor();
    await changeRole(ann.page, bobEmail, 'admin');
    const annToken = (await tokenOf(ann.page)) ?? '';
    await expect.poll(() => roleOf(s.t, `/v2/teams/${teamId}`, annToken, bobEmail)).toBe('admin');
    await bob.page.reload();
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('admin');
    await bob.page.getByRole('heading', { name: 'Invitations' }).waitFor();

    // Another invitation: resent (a second e-mail), then revoked.
    const carol = unique('carol');
    await invite(ann.page, carol);
    await invitationLink(carol);
    await row(ann.page, carol).getByRole('button', { name: 'Resend' }).click();
    await s.mail.smtp.waitFor(() => s.mail.smtp.to(carol).length === 2);
    await confirmed(row(ann.page, carol), 'Revoke');
    await row(ann.page, carol).getByText('revoked').waitFor();
    expect(await row(ann.page, carol).getByRole('button').count()).toBe(0);

    // Sending to a member again is refused next to the e-mail field.
    await ann.page.getByLabel('E-mail to invite').fill(bobEmail);
    await ann.page.getByRole('button', { name: 'Send invitation' }).click();
    await expect
      .poll(() => ann.page.getByLabel('E-mail to invite').getAttribute('aria-invalid'))
      .toBe('true');

    // A slug another team holds is refused next to the slug field; a free one is saved.
    const other = await s.t.post('/v2/teams', {
      token: annToken,
      body: { name: 'Day Shift', slug: 'day-shift' },
    });
    expect(other.status, other.text).toBe(201);
    await ann.page.getByLabel('Team slug').fill('day-shift');
    await ann.page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => ann.page.getByLabel('Team slug').getAttribute('aria-invalid'))
      .toBe('true');
    await ann.page.getByLabel('Team slug').fill('nights');
    await ann.page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => ann.page.locator('#team-slug').textContent()).toBe('nights');

    await ann.page.getByRole('link', { name: 'Teams' }).first().click();
    await row(ann.page, 'Night Shift').getByRole('cell', { name: '2', exact: true }).waitFor();
    await screenshots(ann.page, 'teams');

    // Bob leaves; Ann, the owner, deletes the team.
    await confirmed(bob.page, 'Leave team');
    await bob.page.waitForURL('**/console/teams');
    await bob.page.getByText('You are in no team yet.').waitFor();
    const dayShift = await s.t.del(`/v2/teams/${other.json.id}`, { token: annToken });
    expect(dayShift.status).toBe(204);
    await ann.page.getByRole('link', { name: 'Night Shift' }).click();
    await confirmed(ann.page, 'Delete team');
    await ann.page.waitForURL('**/console/teams');
    await ann.page.getByText('You are in no team yet.').waitFor();

    await closeClean(ann, bob);
  });
});
