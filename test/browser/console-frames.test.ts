// Frames in the console on a self-hosted agent that the test plays over the agent API, as the
// real agent does: created in the console, the frame goes Online and its logs appear live (the
// page follows the frame's event and log streams, no polling); a settings change waits as a
// pending change until Deploy, which the page follows to its end; stop and start too. The
// space's list follows its frames on the project's event stream. Once its agent says it serves
// an edge, the frame's URL is a link (a new tab) on its page and in the list.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { newProject, newUser } from '../helpers/factories.ts';
import { replicaEvents, sync } from '../helpers/frames.ts';
import {
  asPhone,
  overflow,
  person,
  screenshots,
  signIn,
  consoleSuite,
  openProjects,
} from './console.ts';

const s = consoleSuite();

/** The agent's side: takes the desired state and reports the frame's replicas healthy. */
async function agentReportsHealthy(agentToken: string, frameId: string) {
  const state = await sync(s.t, agentToken);
  const desired = state.frames.find((f) => f.frame_id === frameId);
  expect(desired).toBeDefined();
  await sync(s.t, agentToken, {
    events: replicaEvents(frameId, desired?.replica_count, 'healthy', {
      generation: desired?.generation,
    }),
  });
}

const status = (page: Page) => page.locator('#frame-status');
/** Opens one of the frame page's tabs. */
const tab = (page: Page, name: string) => page.getByRole('tab', { name }).click();

describe('console: frames', () => {
  it('creates a frame on a self-hosted agent; it goes Online and its logs appear live', async () => {
    const annUser = await newUser(s.t, 'ann');
    const project = await newProject(s.t, annUser, 'Shop');
    const ann = await person(s.browser, s.t.base);
    await signIn(ann.page, annUser.email);
    await openProjects(ann.page);
    await ann.page.getByRole('link', { name: 'Shop' }).click();
    // The agent is registered in the console, which shows its install command (token) once.
    await ann.page.getByLabel('Agent name').fill('box');
    await ann.page.getByRole('button', { name: 'Register agent' }).click();
    const command = await ann.page.locator('.secret').textContent();
    const agentToken = /FRAMEPLANE_AGENT_TOKEN=(\S+)/.exec(command ?? '')?.[1] ?? '';
    expect(command).toContain('/downloads/frameplane.tgz');
    await sync(s.t, agentToken); // the agent is online
    await ann.page.reload();
    await ann.page.getByText('box online').waitFor();
    await ann.page.getByRole('link', { name: 'default' }).click();
    await ann.page.getByText('No frame in this space yet.').waitFor();
    await ann.page.getByLabel('Name', { exact: true }).fill('web');
    await ann.page.getByLabel('Git owner').fill('acme');
    await ann.page.getByLabel('Repository').fill('app');
    await ann.page.getByLabel('Port').fill('80');
    await ann.page.getByLabel('Runs on').selectOption({ label: 'Agent box' });
    await ann.page.getByRole('button', { name: 'Create frame' }).click();
    // A reserved port is refused next to the port field.
    const port = ann.page.getByLabel('Port');
    await expect.poll(() => port.getAttribute('aria-invalid')).toBe('true');
    await port.fill('8080');
    await ann.page.getByRole('button', { name: 'Create frame' }).click();
    await ann.page.getByRole('heading', { name: 'web' }).waitFor();
    const [, spaceId = '', frameId = ''] =
      /\/spaces\/([^/?#]+)\/frames\/([^/?#]+)/.exec(ann.page.url()) ?? [];
    await expect.poll(() => status(ann.page).textContent()).toBe('Starting');
    expect(await ann.page.locator('#runs-on').textContent()).toBe('A self-hosted agent (online)');
    // Its agent has not said it serves an edge: the hostname, no link.
    const address = ann.page.locator('#frame-address');
    expect(await address.textContent()).toMatch(/^web-[a-z0-9]{6}\.localhost no URL: its agent/);
    expect(await address.getByRole('link').count()).toBe(0);

    // The agent says where it serves, then reports the replica healthy: the page shows Online
    // and the frame's URL without a reload.
    await sync(s.t, agentToken, { edge: { http_port: 8000, https_port: null } });
    await agentReportsHealthy(agentToken, frameId);
    await expect.poll(() => status(ann.page).textContent()).toBe('Online');
    const { url, hostname } = (
      await s.t.get(`/v2/projects/${project.id}/spaces/${spaceId}/frames/${frameId}`, {
        token: annUser.token,
      })
    ).json;
    expect(url).toBe(`http://${hostname}:8000`);
    const link = address.getByRole('link', { name: url });
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe(url);
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    await ann.page.locator('#recent-events').getByText('Online').first().waitFor();

    const line = (text: string) => ({
      frame_id: frameId,
      replica: 0,
      at: new Date().toISOString(),
      line: text,
    });
    await tab(ann.page, 'Logs');
    await sync(s.t, agentToken, { logs: [line('listening on 8080')] });
    await expect
      .poll(() => ann.page.locator('#logs').textContent())
      .toContain('[0] listening on 8080');
    await sync(s.t, agentToken, { logs: [line('GET / 200')] });
    await expect.poll(() => ann.page.locator('#logs').textContent()).toContain('[0] GET / 200');
    // At phone width nothing is wider than the screen (the deployments are stacked).
    await asPhone(ann.page);
    expect(await overflow(ann.page)).toBe(0);
    await screenshots(ann.page, 'frame');

    // A branch change waits for a deploy; the deploy is followed until Online again.
    await tab(ann.page, 'Settings');
    await ann.page.getByLabel('Branch').fill('next');
    await ann.page.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(() => ann.page.locator('#pending-changes').textContent())
      .toContain('git_repository_branch');
    await ann.page.getByRole('button', { name: 'Deploy' }).click();
    await expect.poll(() => status(ann.page).textContent()).toBe('Starting');
    expect(await ann.page.locator('#pending-changes').count()).toBe(0);
    // The agent builds it and names the commit.
    const building = (await sync(s.t, agentToken)).frames.find((f) => f.frame_id === frameId);
    await sync(s.t, agentToken, {
      builds: [
        { deployment_id: building?.deployment_id, state: 'building', commit_sha: 'c0ffee12345' },
      ],
    });
    await agentReportsHealthy(agentToken, frameId);
    await expect.poll(() => status(ann.page).textContent()).toBe('Online');
    // It serves the commit built (read again on the frame's events), as its deployment says.
    await tab(ann.page, 'Overview');
    await expect
      .poll(() => ann.page.locator('#serving').textContent())
      .toMatch(/^c0ffee1 \(next\) · manual · /);
    await tab(ann.page, 'Deployments');
    await expect.poll(() => ann.page.getByTitle('c0ffee12345').textContent()).toBe('c0ffee1');

    // Env: a variable is set, then shown with its value once revealed (Ann is the owner).
    await tab(ann.page, 'Environment');
    await ann.page.getByLabel('Variable').fill('GREETING');
    await ann.page.getByLabel('Value', { exact: true }).fill('hello');
    await ann.page.getByRole('button', { name: 'Set variable' }).click();
    await ann.page.getByRole('button', { name: 'Reveal the value of GREETING' }).click();
    await ann.page.getByRole('row').filter({ hasText: 'GREETING' }).getByText('hello').waitFor();

    // Stop, then start: the status follows.
    await ann.page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => status(ann.page).textContent()).toBe('Stopped');
    await ann.page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => status(ann.page).textContent()).not.toBe('Stopped');
    await agentReportsHealthy(agentToken, frameId);
    await expect.poll(() => status(ann.page).textContent()).toBe('Online');

    // Scale to two replicas: the added one comes up while the first serves, so the frame stays
    // Online throughout (issue 38), never Degraded.
    await tab(ann.page, 'Settings');
    await ann.page.getByLabel('Replicas').fill('2');
    await ann.page.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(
        async () =>
          (await s.t.get(`/v2/projects/${project.id}/frames`, { token: annUser.token })).json
            .data[0].replica_count,
      )
      .toBe(2);

    expect(await status(ann.page).textContent()).toBe('Online');
    await agentReportsHealthy(agentToken, frameId);
    await expect.poll(() => status(ann.page).textContent()).toBe('Online');
    const events = (
      await s.t.get(`/v2/projects/${project.id}/spaces/${spaceId}/frames/${frameId}/events`, {
        token: annUser.token,
      })
    ).json.data;
    expect(events.filter((e: { status: string | null }) => e.status === 'Degraded')).toEqual([]);

    // A volume, and a domain verified by its DNS record (the test's DNS table).
    await tab(ann.page, 'Volumes');
    await ann.page.getByLabel('Volume name').fill('data');
    await ann.page.getByLabel('Mount path').fill('/data');
    await ann.page.getByRole('button', { name: 'Add volume' }).click();
    await ann.page.getByText('at /data, 1 GB').waitFor();
    await tab(ann.page, 'Domains');
    await ann.page.getByLabel('Hostname').fill('shop.example.com');
    await ann.page.getByRole('button', { name: 'Add domain' }).click();
    const record = ann.page.locator('#domains-title + * code, section:has(#domains-title) code');
    await record.first().waitFor();
    const [name = '', value = '', target = ''] = await record.allTextContents();
    expect(target).toBe(hostname); // the CNAME record's target: the frame's hostname
    s.t.dns.add(name, value);
    await ann.page.getByRole('button', { name: 'Verify' }).click();
    await ann.page.getByText('verified', { exact: true }).waitFor();

    // The space's list follows its frames live too (one project stream for the space); the
    // back link is named after the space.
    await ann.page.getByRole('link', { name: '← default' }).click();
    const listed = ann.page.getByRole('row').filter({ hasText: 'web' });

    await listed.getByText('Online').waitFor();
    const listedLink = listed.getByRole('link', { name: url });
    expect(await listedLink.getAttribute('target')).toBe('_blank');
    expect(await listedLink.getAttribute('rel')).toBe('noopener noreferrer');
    await screenshots(ann.page, 'space');
    const stop = await s.t.post(
      `/v2/projects/${project.id}/spaces/${spaceId}/frames/${frameId}/stop`,
      {
        token: annUser.token,
      },
    );
    expect(stop.status, stop.text).toBe(202);
    await listed.getByText('Stopped').waitFor();

    // Deleted from its page, the frame leaves the list.
    await ann.page.getByRole('link', { name: 'web', exact: true }).click();
    await tab(ann.page, 'Settings');
    await ann.page.getByRole('button', { name: 'Delete frame' }).click();
    await ann.page.getByRole('button', { name: 'Yes, delete frame' }).click();
    await ann.page.getByText('No frame in this space yet.').waitFor();

    expect(ann.realErrors()).toEqual([]);
    await ann.close();
  });
});
