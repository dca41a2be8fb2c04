// `frameplane link`: a directory names its project (and frame) once, in .frameplane.json, and
// every command run in it or below it takes -p and a left-out frame from there; an explicit -p
// wins; a link to another service, a broken file and no link at all are said in plain words.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newProject } from '../helpers/factories.ts';
import { createWebFrame, runIn } from './run.ts';
import { serviceForFile, shopWorld } from './service.ts';

const s = serviceForFile();

/** A checkout: its top directory (where `link` runs) and a directory deep inside it. */
function checkout() {
  const top = mkdtempSync(join(tmpdir(), 'frameplane-link-'));
  const deep = join(top, 'src', 'app');
  mkdirSync(deep, { recursive: true });
  return { top, deep, file: join(top, '.frameplane.json') };
}

describe('link', () => {
  it('links a directory to a project and a frame, used from below when -p is absent', async () => {
    const { ann, env, project, agent } = await shopWorld(s.t, s.server);
    const { top, deep, file } = checkout();
    const created = await runIn(top, [...createWebFrame(agent.id), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const web = JSON.parse(created.stdout);

    const linked = await runIn(top, ['link', 'Shop'], env);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stderr).toContain(`Linked ${file} to project Shop`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      server: s.server,
      project: { id: project.id, name: 'Shop' },
    });

    // -p comes from the link, found from a subdirectory upwards.
    const listed = await runIn(deep, ['frames', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id: web.id, name: 'web' }]);
    // A last <project> argument too.
    const access = await runIn(deep, ['access', '--json'], env);
    expect(access.code, access.stderr).toBe(0);
    expect(JSON.parse(access.stdout).members).toHaveLength(1);
    // No frame is linked yet: a frame argument is still needed, and the CLI says how to link one.
    const noFrame = await runIn(deep, ['frames', 'show'], env);
    expect(noFrame.code).toBe(2);
    expect(noFrame.stderr).toContain("missing required argument 'frame'");
    expect(noFrame.stderr).toContain('frameplane link --frame');

    // `link --frame` in a linked directory keeps its project; the frame is then the default.
    expect((await runIn(top, ['link', '--frame', 'web'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).frame).toEqual({ id: web.id, name: 'web' });
    const shown = await runIn(deep, ['frames', 'show', '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: web.id, project_id: project.id });

    const show = await runIn(deep, ['link', '--show'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^file:\\s+${file}$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^project:\\s+Shop \\(${project.id}\\)$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^frame:\\s+web \\(${web.id}\\)$`, 'm'));

    // An explicit -p wins, and the linked frame (of Shop) is not taken for another project.
    const other = await newProject(s.t, ann, 'Other');
    const otherList = await runIn(deep, ['frames', 'list', '-p', 'Other', '--json'], env);
    expect(otherList.code, otherList.stderr).toBe(0);
    expect(JSON.parse(otherList.stdout)).toEqual([]);
    const otherShow = await runIn(deep, ['frames', 'show', '-p', other.id], env);
    expect(otherShow.code).toBe(2);
    expect(otherShow.stderr).toContain("missing required argument 'frame'");
    expect(otherShow.stderr).toContain('the linked frame is in project Shop');

    const unlinked = await runIn(deep, ['unlink'], env);
    expect(unlinked.code, unlinked.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    const unlinkedList = await runIn(deep, ['frames', 'list'], env);
    expect(unlinkedList.code).toBe(2);
    expect(unlinkedList.stderr).toContain("required option '-p, --project <project>'");
    expect(unlinkedList.stderr).toContain('frameplane link <project>');
    const noLink = await runIn(deep, ['link', '--show'], env);
    expect(noLink.code).toBe(4);
    expect(noLink.stderr).toContain('not linked');
  });

  it('refuses a link to another service and a broken link file, saying which file', async () => {
    const { env } = await shopWorld(s.t, s.server);
    const { top, deep, file } = checkout();
    expect((await runIn(top, ['link', 'Shop'], env)).code).toBe(0);

    const elsewhere = await runIn(deep, ['frames', 'list'], {
      ...env,
      FRAMEPLANE_SERVER: 'https://other.example.test',
    });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`${file} links to a project on ${s.server}`);

    writeFileSync(file, '{"server": ');
    const broken = await runIn(deep, ['frames', 'list'], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`${file}: not JSON`);
    writeFileSync(file, '{"server": "x", "project": "Shop"}\n');
    const wrong = await runIn(deep, ['frames', 'list'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('"project": {"id", "name"}');
  });
});
