// Where a frame answers, as the CLI tells it (CONTRACT 5b): the URL after `frames create` and
// `deploy --wait`, in `frames show` and `frames list`, `frameplane open` (printed, or handed to
// $BROWSER: a script that writes down what it was given, so no browser starts), and the reason
// when there is none (the agent has no edge). Then which opener each platform gets.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { opener } from '../../src/cli/open.ts';
import { replicaEvents, sync } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { createWebFrame, run, runJson } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const svc = serviceForFile();
const p = ['-p', 'Shop'];
/** What an agent says of its edge in its sync: it serves frames over HTTP on 8000. */
const edge = { edge: { http_port: 8000, https_port: null } };

describe('frame addresses', () => {
  it('prints the URL on create, show, list, deploy --wait and open', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    await sync(svc.t, agent.token, edge);

    const created = await run(createWebFrame(agent.id), env);
    expect(created.code, created.stderr).toBe(0);
    const url = /^url:\s+(\S+)$/m.exec(created.stdout)?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/web-[a-z0-9]{6}\.localhost:8000$/);
    const hostname = new URL(url).hostname;
    expect(created.stdout).toMatch(new RegExp(`^hostname:\\s+${hostname}$`, 'm'));
    expect(created.stderr).toContain(`web will answer at ${url} once Online.`);

    const shown = await runJson(['frames', 'show', 'web', ...p], env);
    expect(shown).toMatchObject({ name: 'web', hostname, url });
    const human = await run(['frames', 'show', 'web', ...p], env);
    expect(human.stdout).toMatch(new RegExp(`^url:\\s+${url}$`, 'm'));
    const listed = await run(['frames', 'list', ...p], env);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+STATUS\s+URL\s+REPLICAS/m);
    expect(listed.stdout).toMatch(new RegExp(`\\s+web\\s+Starting\\s+${url}\\s+1\\s`));

    // deploy --wait: the agent reports the new generation healthy; the URL follows Online.
    const deploy = run(['frames', 'deploy', 'web', ...p, '--wait'], env);
    // Until the new deployment is the agent's desired state.
    const desired = await waitFor(
      "the new deployment in the agent's desired state",
      async () => (await sync(svc.t, agent.token)).frames.find((f) => f.frame_id === shown.id),
      {
        until: (d) => d !== undefined && d.deployment_id !== shown.latest_deployment.id,
        timeoutMs: 15_000,
        everyMs: 200,
      },
    );
    await sync(svc.t, agent.token, {
      events: replicaEvents(shown.id, 1, 'healthy', { generation: desired?.generation }),
    });
    const done = await deploy;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/web: Online\n$/);
    expect(done.stdout).toBe(`${url}\n`);

    const printed = await run(['open', 'web', ...p, '--print'], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(`${url}\n`);
    expect(printed.stderr).toBe('');

    // No $BROWSER and no graphical session (the test gives the CLI no DISPLAY): printed.
    const headless = await run(['open', 'web', ...p], env);
    expect(headless.code, headless.stderr).toBe(0);
    expect(headless.stdout).toBe(`${url}\n`);
    expect(headless.stderr).toContain('No browser to open it in here');

    // $BROWSER is given the URL as its argument.
    const dir = mkdtempSync(join(tmpdir(), 'frameplane-browser-'));
    const browser = join(dir, 'browser');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${dir}/opened'\n`);
    chmodSync(browser, 0o755);
    const opened = await run(['open', shown.id, ...p], { ...env, BROWSER: browser });
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stderr).toBe(`Opening ${url}\n`);
    expect(opened.stdout).toBe('');
    expect(readFileSync(join(dir, 'opened'), 'utf8')).toBe(url);
  });

  it('says why a frame has no URL, and `open` exits 5', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    await sync(svc.t, agent.token, { edge: null }); // an agent started without an edge

    const created = await run(createWebFrame(agent.id), env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^url:\s+none: its agent has no edge$/m);
    const hostname = /^hostname:\s+(\S+)$/m.exec(created.stdout)?.[1] ?? '';
    expect(hostname).toMatch(/^web-[a-z0-9]{6}\.localhost$/);
    expect(created.stderr).toContain(`web has no URL: its agent has no edge`);
    expect(created.stderr).toContain(`Its hostname: ${hostname}`);

    const json = await runJson(['frames', 'show', 'web', ...p], env);
    expect(json).toMatchObject({ hostname, url: null });
    // The list shows the hostname where the URL would be.
    const listed = await run(['frames', 'list', ...p], env);
    expect(listed.stdout).toMatch(new RegExp(`\\s+web\\s+Starting\\s+${hostname}\\s+1\\s`));

    const open = await run(['open', 'web', ...p, '--print'], env);
    expect(open.code).toBe(5);
    expect(open.stdout).toBe('');
    expect(open.stderr).toMatch(/^frameplane: web has no URL: its agent has no edge/);
  });

  it('prints the CNAME target of a domain beside its TXT record', async () => {
    const { env, agent } = await shopWorld(svc.t, svc.server);
    const frame = await runJson(createWebFrame(agent.id), env);
    const added = await run(['frames', 'domains', 'add', 'web', 'shop.example.com', ...p], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^record type:\s+TXT$/m);
    expect(added.stdout).toMatch(new RegExp(`^cname target:\\s+${frame.hostname}$`, 'm'));
    expect(added.stderr).toContain(
      `A CNAME record for shop.example.com pointing at ${frame.hostname} routes it`,
    );
    const json = await runJson(['frames', 'domains', 'list', 'web', ...p], env);
    expect(json).toMatchObject([{ hostname: 'shop.example.com', target: frame.hostname }]);
    const listed = await run(['frames', 'domains', 'list', 'web', ...p], env);
    expect(listed.stdout).toMatch(/CNAME TARGET\s+DNS RECORD$/m);
    expect(listed.stdout).toMatch(new RegExp(`\\s+no\\s+${frame.hostname}\\s+TXT `));
  });
});

describe('opener', () => {
  const url = 'http://web-8f3k2q.localhost:8000';
  it("picks $BROWSER, else the platform's opener, else none without a display", () => {
    expect(opener(url, 'linux', { BROWSER: 'firefox -new-tab:lynx' })).toEqual({
      command: 'firefox',
      args: ['-new-tab', url],
    });
    expect(opener(url, 'linux', { BROWSER: 'w3m %s' })).toEqual({ command: 'w3m', args: [url] });
    expect(opener(url, 'darwin', {})).toEqual({ command: 'open', args: [url] });
    expect(opener(url, 'win32', {})).toEqual({
      command: 'cmd.exe',
      args: ['/d', '/c', 'start', '""', url],
    });
    expect(opener(url, 'linux', { DISPLAY: ':0' })).toEqual({ command: 'xdg-open', args: [url] });
    expect(opener(url, 'linux', {})).toBeUndefined();
    // Not an address cmd.exe could take as is: printed, never opened.
    expect(opener('http://x.localhost/&calc', 'win32', {})).toBeUndefined();
    expect(opener('file:///etc/passwd', 'darwin', {})).toBeUndefined();
  });
});
