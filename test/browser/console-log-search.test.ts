// The Logs tab searches (issue 39): text and source go to the API's filters, the view shows
// only matching lines, and new matching lines still arrive live; at desktop and phone widths.
import { describe, expect, it } from 'vitest';
import { projectWithReaders } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, newFrame, serveAt, sync } from '../helpers/frames.ts';
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

describe('console: searching a frame log', () => {
  it('filters by text and by source, live, at both widths', async () => {
    const { ann, project } = await projectWithReaders(s.t);
    const space = await defaultSpace(s.t, ann, project.id);
    const agent = await cloudAgent(s.t);
    const frame = await newFrame(s.t, ann, project.id, space);
    await serveAt(s.t, agent.token, frame.id, 'b'.repeat(40));
    const line = (text: string, source = 'app') => ({
      frame_id: frame.id,
      replica: 0,
      at: new Date().toISOString(),
      line: text,
      source,
    });
    await sync(s.t, agent.token, {
      logs: [
        line('npm run build', 'build'),
        line('GET / 200'),
        line('GET /health 200'),
        line('ERROR: cannot reach cache'),
      ],
    });

    const ann_ = await person(s.browser, s.t.base);
    const p = ann_.page;
    await signIn(p, ann.email);
    await p.goto(`/console/projects/${project.id}/spaces/${space}/frames/${frame.id}?tab=logs`);
    const log = p.locator('#logs');
    await expect.poll(() => log.textContent()).toContain('ERROR: cannot reach cache');
    expect(await log.textContent()).toContain('build[0] npm run build');

    await p.getByRole('searchbox', { name: 'Search the logs' }).fill('error');
    await p.getByRole('button', { name: 'Search' }).click();
    // The view starts over (empty) on a new search, then fills with the matches.
    await expect.poll(() => log.textContent()).not.toContain('GET /');
    await expect.poll(() => log.textContent()).toContain('app[0] ERROR: cannot reach cache');
    expect(await log.textContent()).not.toContain('GET /');
    // A new line that matches shows up; one that does not, does not.
    await sync(s.t, agent.token, { logs: [line('GET /x 200'), line('error again')] });
    await expect.poll(() => log.textContent()).toContain('error again');
    expect(await log.textContent()).not.toContain('GET /x');
    await screenshots(p, 'log-search');

    await p.getByRole('searchbox', { name: 'Search the logs' }).fill('');
    await p.getByRole('button', { name: 'Search' }).click();
    await p.getByRole('combobox', { name: 'Source' }).selectOption('build');
    await expect.poll(() => log.textContent()).not.toContain('ERROR');
    await expect.poll(() => log.textContent()).toContain('npm run build');
    expect(await log.textContent()).not.toContain('ERROR');
    await p.getByRole('searchbox', { name: 'Search the logs' }).fill('nothing like this');
    await p.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => log.textContent()).toContain('No line matches');

    await asPhone(p);
    expect(await overflow(p)).toBe(0);
    await closeClean(ann_);
  });
});
