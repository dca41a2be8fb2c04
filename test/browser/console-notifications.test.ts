// Notifications in the console: Ann, an admin of her project, adds an endpoint at a real
// receiver on loopback and sees its signing secret once; the receiver verifies the test event
// with it, and the console shows the delivery succeed (and a redelivery). She turns the
// endpoint off and on, rotates its secret, and removes it. Bob, a member, sees no section.
import { afterAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addMember, newProject, newTeam, newUser, share } from '../helpers/factories.ts';
import { type Receiver, startReceiver } from '../notifications/receiver.ts';
import {
  asPhone,
  closeClean,
  confirmed,
  consoleSuite,
  overflow,
  person,
  row,
  screenshots,
  signIn,
} from './console.ts';

const s = consoleSuite(() => ({
  env: { NOTIFICATIONS_ALLOW_HTTP: 'true', NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true' },
  // The worker sends the deliveries.
  worker: true,
}));
let receiver: Receiver | undefined;
afterAll(() => receiver?.close());

/** The secret the notice shows, once it shows one other than `before`. */
async function shownSecret(page: Page, before?: string) {
  const notice = page.getByRole('status').filter({ hasText: 'It is not shown again.' });
  await expect.poll(() => notice.locator('code').textContent()).not.toBe(before ?? null);
  const secret = (await notice.locator('code').textContent()) ?? '';
  expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  return secret;
}

/** The deliveries shown, once the newest one is `status` and `count` are shown. */
async function deliveries(page: Page, count: number, status: string) {
  const rows = page.locator('#deliveries tbody tr');
  await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(count);
  await expect.poll(() => rows.first().textContent(), { timeout: 20_000 }).toContain(status);
  return rows;
}

describe('console: notifications', () => {
  it('adds an endpoint, tests it, turns it off and on, rotates its secret, removes it', async () => {
    const annUser = await newUser(s.t, 'ann');
    const project = await newProject(s.t, annUser, 'Shop');
    let secret: string | undefined;
    receiver = await startReceiver({ secret: () => secret, now: () => s.t.clock.now() });
    const api = `/v2/projects/${project.id}/notifications`;
    const ann = await person(s.browser, s.t.base);
    const { page } = ann;
    await signIn(page, annUser.email);
    await page.goto(`/console/projects/${project.id}`);
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    await page.getByText('No endpoint.').waitFor();

    // Without an event, the service's refusal is shown by the events.
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('group', { name: 'Events' }).locator('.field-error').waitFor();

    await page.getByLabel('deploy.failed').check();
    await page.getByLabel('frame.error').check();
    await page.getByLabel('Format').selectOption('json');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    secret = await shownSecret(page);
    const endpoint = row(page, receiver.url);
    await endpoint.getByText('deploy.failed, frame.error').waitFor();
    expect(await endpoint.textContent()).toContain('json');
    await endpoint.getByText('on', { exact: true }).waitFor();
    const listed = await s.t.get(api, { token: annUser.token });
    expect(listed.json.data).toMatchObject([
      { url: receiver.url, events: ['deploy.failed', 'frame.error'] },
    ]);
    expect(JSON.stringify(listed.json)).not.toContain(secret);

    // A test event: the receiver verifies it with the secret shown; the console shows it sent.
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    let rows = await deliveries(page, 1, 'succeeded');
    expect(await rows.first().textContent()).toMatch(/ping.*succeeded.*1.*200/);
    expect(receiver.got.map((g) => g.verified)).toEqual([true]);
    expect(receiver.events()[0].type).toBe('ping');
    // Nothing to scroll sideways at phone width, long URL included.
    await asPhone(page);
    expect(await overflow(page)).toBe(0);
    await screenshots(page, 'notifications');

    // Sent again: a new delivery of the same event.
    await rows.first().getByRole('button', { name: 'Redeliver' }).click();
    rows = await deliveries(page, 2, 'succeeded');
    await receiver.until(2);
    const [first, again] = receiver.events();
    expect(again.id).toBe(first.id);

    await endpoint.getByRole('button', { name: 'Turn off' }).click();
    await endpoint.getByText('off (manual)').waitFor();
    expect((await s.t.get(api, { token: annUser.token })).json.data[0].enabled).toBe(false);
    await endpoint.getByRole('button', { name: 'Turn on' }).click();
    await endpoint.getByText('on', { exact: true }).waitFor();
    expect((await s.t.get(api, { token: annUser.token })).json.data[0].enabled).toBe(true);

    // A rotated secret is shown once too; the receiver verifies the next event with it.
    await confirmed(endpoint, 'Rotate secret');
    secret = await shownSecret(page, secret);
    await endpoint.getByRole('button', { name: 'Send test event' }).click();
    await deliveries(page, 3, 'succeeded');
    await receiver.until(3);
    expect(receiver.got.map((g) => g.verified)).toEqual([true, true, true]);

    await confirmed(endpoint, 'Remove');
    await page.getByText('No endpoint.').waitFor();
    expect((await s.t.get(api, { token: annUser.token })).json.data).toEqual([]);
    await closeClean(ann);
  });

  it('is not shown to a member of the project, whom the service refuses', async () => {
    const annUser = await newUser(s.t, 'ann');
    const bobUser = await newUser(s.t, 'bob');
    const team = await newTeam(s.t, annUser, 'Builders');
    await addMember(s.t, team.id, bobUser, 'member');
    const project = await newProject(s.t, annUser, 'Site');
    await share(s.t, team.id, project.id, 'member');

    const bob = await person(s.browser, s.t.base);
    await signIn(bob.page, bobUser.email);
    await bob.page.goto(`/console/projects/${project.id}`);
    await expect.poll(() => bob.page.locator('#my-role').textContent()).toBe('member');
    await bob.page.getByRole('heading', { name: 'Spaces and frames' }).waitFor();
    expect(await bob.page.getByRole('heading', { name: 'Notifications' }).count()).toBe(0);
    expect(await bob.page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    const refused = await s.t.get(`/v2/projects/${project.id}/notifications`, {
      token: bobUser.token,
    });
    expect(refused.status).toBe(403);
    await closeClean(bob);
  });
});
