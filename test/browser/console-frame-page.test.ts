// The frame page's layout (issue 38), on a cloud agent that the test plays over the agent API:
// a header with the live status and its reason in words, then tabs (ARIA tabs: arrow keys,
// Home, End; the open tab in the URL, kept by a reload and by Back). The overview shows the URL,
// the release it serves (commit, when) and the recent events: the history read on opening,
// then each new one live. Deployments are newest first; a failure without a message shows its
// reason in words and no dangling colon. Env values are masked until revealed, one at a time,
// and stay editable. Every tab fits a phone (390 px) and a desktop (1280 px) with no sideways
// scroll: the tab list scrolls on its own.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { projectWithReaders } from '../helpers/factories.ts';
import {
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  serveAt,
  sync,
  toldOf,
} from '../helpers/frames.ts';
import {
  asPhone,
  closeClean,
  consoleSuite,
  overflow,
  person,
  screenshots,
  signIn,
} from './console.ts';

const s = consoleSuite();

const TABS = [
  'Overview',
  'Logs',
  'Metrics',
  'Deployments',
  'Settings',
  'Environment',
  'Domains',
  'Volumes',
];
const selected = (page: Page) => page.locator('[role="tab"][aria-selected="true"]');
const recent = (page: Page) => page.locator('#recent-events li');
const rows = (page: Page) => page.locator('section:has(#deployments-title) tbody tr');
const envRow = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name });

describe('console: the frame page', () => {
  it('header, tabs, overview with history and live events, deployments, env, widths', async () => {
    const { ann, viewer, project } = await projectWithReaders(s.t);
    const space = await defaultSpace(s.t, ann, project.id);
    const agent = await cloudAgent(s.t);
    const frame = await newFrame(s.t, ann, project.id, space);
    const path = framePath(frame);
    await sync(s.t, agent.token, { edge: { http_port: 8000, https_port: null } });
    await serveAt(s.t, agent.token, frame.id, 'a'.repeat(40));
    const env = { GREETING: 'hello', TOKEN: 's3cret' };
    expect((await s.t.put(`${path}/env`, { token: ann.token, body: { vars: env } })).status).toBe(
      200,
    );
    const { url } = (await s.t.get(path, { token: ann.token })).json;
    const page = `/console/projects/${project.id}/spaces/${space}/frames/${frame.id}`;

    const annP = await person(s.browser, s.t.base);
    const p = annP.page;
    await signIn(p, ann.email);
    await p.goto(page);

    // The overview: status, URL (a link), the serving release's commit and when.
    await expect.poll(() => p.locator('#frame-status').textContent()).toBe('Online');
    expect(await p.locator('#frame-status-reason').count()).toBe(0);
    const link = p.locator('#frame-address').getByRole('link', { name: url });
    expect(await link.getAttribute('href')).toBe(url);
    await expect
      .poll(() => p.locator('#serving').textContent())
      .toMatch(/^aaaaaaa \(main\) · create · /);
    expect(await p.locator('#serving time').getAttribute('title')).toBeTruthy();
    // The events that happened before the page opened are there, newest first, at most five.
    await expect.poll(() => recent(p).first().textContent()).toContain('Env changed');
    expect(await p.locator('#recent-events').textContent()).toContain('→ Online');
    expect(await recent(p).count()).toBeLessThanOrEqual(5);

    // A deploy fails on a port in use, with no message; the release before it still serves.
    // The page follows it live, and says why in words, with no dangling colon.
    const deploy = await s.t.post(`${path}/deploy`, { token: ann.token, body: {} });
    expect(deploy.status, deploy.text).toBe(202);
    await portInUse(agent.token, frame.id);
    const latest = p.locator('#latest-deployment');
    await expect.poll(() => latest.textContent()).toMatch(/^failed .*Port in use$/);
    expect(await recent(p).first().textContent()).not.toContain('Env changed');
    expect(await p.locator('#frame-status').textContent()).toBe('Online');
    expect(await p.locator('#serving').textContent()).toMatch(/^aaaaaaa/);
    await screenshots(p, 'frame-page-overview');

    // Tabs: one tablist, its panel labelled by the open tab; arrows, Home and End move and open.
    const tabs = p.getByRole('tablist', { name: 'Frame' }).getByRole('tab');
    expect(await tabs.allTextContents()).toEqual(TABS);
    expect(await selected(p).textContent()).toBe('Overview');
    const panel = p.getByRole('tabpanel');
    expect(await panel.getAttribute('aria-labelledby')).toBe(await selected(p).getAttribute('id'));
    expect(await tabs.nth(1).getAttribute('tabindex')).toBe('-1');
    await selected(p).focus();
    await p.keyboard.press('ArrowRight');
    await expect.poll(() => selected(p).textContent()).toBe('Logs');
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Logs');
    expect(new URL(p.url()).search).toBe('?tab=logs');
    // The whole history is on the Logs tab: down to the frame's creation, before the page.
    await p.locator('#events').getByText('Created', { exact: true }).waitFor();
    await p.keyboard.press('End');
    await expect.poll(() => selected(p).textContent()).toBe('Volumes');
    await p.keyboard.press('ArrowRight');
    await expect.poll(() => selected(p).textContent()).toBe('Overview');
    expect(new URL(p.url()).search).toBe('');
    await p.keyboard.press('ArrowLeft');
    await expect.poll(() => selected(p).textContent()).toBe('Volumes');
    await p.keyboard.press('Home');
    await expect.poll(() => selected(p).textContent()).toBe('Overview');
    // A reload keeps the tab; Back returns to the one before.
    await p.getByRole('tab', { name: 'Deployments' }).click();
    await p.getByRole('tab', { name: 'Environment' }).click();
    await p.reload();
    await expect.poll(() => selected(p).textContent()).toBe('Environment');
    await p.goBack();
    await expect.poll(() => selected(p).textContent()).toBe('Deployments');

    // Deployments newest first: the failed deploy, then the release that served.
    const listed = (await s.t.get(`${path}/deployments`, { token: ann.token })).json.data;
    expect(listed.map((d: { trigger: string }) => d.trigger)).toEqual(['manual', 'create']);
    await expect.poll(() => rows(p).count()).toBe(2);
    const failed = await rows(p).nth(0).textContent();
    expect(failed).toContain('manual');
    expect(failed).toContain('failedPort in use');
    expect(failed).not.toMatch(/use:|port_in_use/);
    expect(await rows(p).nth(1).textContent()).toContain('aaaaaaa');

    // Env values are masked, each revealed on its own, and still editable.
    await p.getByRole('tab', { name: 'Environment' }).click();
    const greeting = envRow(p, 'GREETING');
    await expect
      .poll(() => greeting.getByRole('cell').first().textContent())
      .toBe('••••••••value hidden');
    expect(await p.getByRole('tabpanel').textContent()).not.toMatch(/hello|s3cret/);
    const reveal = p.getByRole('button', { name: 'Reveal the value of GREETING' });
    expect(await reveal.getAttribute('aria-pressed')).toBe('false');
    await reveal.click();
    await greeting.getByText('hello').waitFor();
    expect(await envRow(p, 'TOKEN').textContent()).not.toContain('s3cret');
    await p.getByRole('button', { name: 'Edit GREETING' }).click();
    await p.getByRole('textbox', { name: 'Value of GREETING' }).fill('hi there');
    await greeting.getByRole('button', { name: 'Save' }).click();
    await greeting.getByText('hi there').waitFor();
    const saved = (await s.t.get(`${path}/env`, { token: ann.token })).json.vars;
    expect(saved).toEqual({ GREETING: 'hi there', TOKEN: 's3cret' });
    await p.getByRole('button', { name: 'Hide the value of GREETING' }).click();
    expect(await greeting.textContent()).not.toContain('hi there');

    // Settings end with the danger zone, which holds the delete action.
    await p.getByRole('tab', { name: 'Settings' }).click();
    const last = p.locator('[role="tabpanel"] > section').last();
    // The click paints the new panel a moment later: wait for it, not the one before.
    await expect
      .poll(() => last.getByRole('heading', { level: 2 }).textContent())
      .toBe('Danger zone');
    expect(await last.getByRole('button', { name: 'Delete frame' }).count()).toBe(1);

    // Every tab at both widths: nothing wider than the screen; at a phone's, the tab list
    // scrolls on its own and keeps the open tab in view.
    for (const name of TABS) {
      await asPhone(p);
      await p.getByRole('tab', { name }).click();
      await p.getByRole('tabpanel').locator('section').first().waitFor();
      expect(await overflow(p), `${name} on a phone`).toBe(0);
      expect(await tabInView(p), name).toBe(true);
      await screenshots(p, `frame-page-${name.toLowerCase()}`); // ends at the desktop's width
      expect(await overflow(p), name).toBe(0);
      // Back to the phone's width: the open tab is brought into view again.
      await asPhone(p);
      await expect.poll(() => tabInView(p), { message: `${name} after a resize` }).toBe(true);
    }
    await asPhone(p);
    const list = p.getByRole('tablist');
    expect(await list.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);

    // A frame whose first deploy fails that way is in Error: its reason in words, live.
    const api = await newFrame(s.t, ann, project.id, space, { name: 'api' });
    await p.goto(`/console/projects/${project.id}/spaces/${space}/frames/${api.id}`);
    await expect.poll(() => p.locator('#frame-status').textContent()).toBe('Starting');
    await portInUse(agent.token, api.id);
    await expect.poll(() => p.locator('#frame-status').textContent()).toBe('Error');
    expect(await p.locator('#frame-status-reason').textContent()).toBe('Port in use');
    expect(await p.locator('#frame-status-reason').getAttribute('title')).toBe('port_in_use');
    await expect.poll(() => recent(p).first().textContent()).toContain('→ Error (port in use)');
    expect(await p.locator('#serving').textContent()).toBe('Nothing serves yet.');
    await expect.poll(() => latest.textContent()).toMatch(/^failed .*Port in use$/);
    await screenshots(p, 'frame-page-error');

    // A viewer: names without values, no reveal, no danger zone, no actions.
    const vic = await person(s.browser, s.t.base);
    await signIn(vic.page, viewer.email);
    await vic.page.goto(`${page}?tab=environment`);
    await envRow(vic.page, 'GREETING').getByText('hidden').waitFor();
    expect(await vic.page.getByRole('button', { name: /Reveal/ }).count()).toBe(0);
    await vic.page.getByRole('tab', { name: 'Settings' }).click();
    await vic.page.getByRole('heading', { name: 'Settings' }).waitFor();
    expect(await vic.page.getByRole('heading', { name: 'Danger zone' }).count()).toBe(0);
    expect(await vic.page.getByRole('button', { name: 'Deploy' }).count()).toBe(0);

    await closeClean(annP, vic);
  });
});

/** The agent's side: the frame's new replica cannot bind its port, and says no more. */
async function portInUse(agentToken: string, frameId: string) {
  const told = await toldOf(s.t, agentToken, frameId);
  await sync(s.t, agentToken, {
    events: replicaEvents(frameId, 1, 'unhealthy', {
      deployment_id: told.deployment_id,
      generation: told.generation,
      detail: { reason: 'port_in_use' },
    }),
  });
}

/** Whether the open tab lies wholly inside its list's visible part. */
const tabInView = (page: Page) =>
  page.evaluate(() => {
    const tab = document.querySelector('[role="tab"][aria-selected="true"]');
    const list = tab?.parentElement;
    if (!tab || !list) return false;
    const t = tab.getBoundingClientRect();
    const l = list.getBoundingClientRect();
    return t.left >= l.left - 1 && t.right <= l.right + 1;
  });
