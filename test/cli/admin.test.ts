// The CLI's management commands against a real service: tokens, a team's members and
// invitations, leave; a frame's env, scale, update (If-Match), events, status and delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { addMember, newTeam, newUser } from '../helpers/factories.ts';
import { createWebFrame, run, runJson, userEnv } from './run.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

const envOf = (token: string) => userEnv(server, token);
const ok = runJson;

describe('tokens, teams, members, invitations', () => {
  it('manages tokens and a team from the command line', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const env = envOf(ann.token);

    const token = await ok(['tokens', 'create', 'ci', '--expires-in-days', '30'], env);
    expect(token.token).toMatch(/^fp_/);
    expect((await ok(['whoami'], envOf(token.token))).id).toBe(ann.id);
    expect((await ok(['tokens', 'list'], env)).map((x: any) => x.name)).toContain('ci');
    expect((await run(['tokens', 'revoke', token.id], env)).code).toBe(0);
    expect((await run(['whoami'], envOf(token.token))).code).toBe(3);

    const team = await newTeam(t, ann, 'Ops');
    await addMember(t, team.id, bob, 'viewer');
    expect(await ok(['teams', 'rename', team.slug, 'Operations'], env)).toMatchObject({
      name: 'Operations',
    });
    expect(await ok(['members', 'set-role', team.slug, bob.email, 'admin'], env)).toMatchObject({
      role: 'admin',
    });
    const invitation = await ok(['invite', team.slug, 'carol@example.test'], env);
    expect(await ok(['invitations', 'list', team.slug], env)).toMatchObject([
      { id: invitation.id, status: 'pending' },
    ]);
    expect((await run(['invitations', 'resend', team.slug, invitation.id], env)).code).toBe(0);
    expect((await run(['invitations', 'revoke', team.slug, invitation.id], env)).code).toBe(0);
    const after = await ok(['invitations', 'list', team.slug], env);
    expect(after.filter((i: any) => i.status === 'pending')).toEqual([]);

    expect((await run(['leave', team.id], envOf(bob.token))).code).toBe(0);
    expect((await ok(['members', 'list', team.slug], env)).map((m: any) => m.user_id)).toEqual([
      ann.id,
    ]);
    const ownerLeaves = await run(['leave', team.slug], env);
    expect(ownerLeaves.code, ownerLeaves.stderr).toBe(5); // refused: a team keeps its owner
    expect(ownerLeaves.stderr).toMatch(/^frameplane: .+ \(4\d\d \w+\)$/m);
  });
});

describe('frame settings and history', () => {
  it('sets env, scales, updates with If-Match, lists events, shows status, deletes', async () => {
    const ann = await newUser(t, 'ann');
    const env = envOf(ann.token);
    const project = await ok(['projects', 'create', 'Shop'], env);
    const agent = await t.post(`/v2/projects/${project.id}/agents`, {
      token: ann.token,
      body: { name: 'box' },
    });
    const frame = await ok(createWebFrame(agent.json.id), env);
    const p = ['-p', 'Shop'];

    expect(await ok(['frames', 'env', 'set', 'web', 'A=1', 'B=x=y', ...p], env)).toMatchObject({
      vars: { A: '1', B: 'x=y' },
    });
    expect(await ok(['frames', 'env', 'unset', 'web', 'A', ...p], env)).toMatchObject({
      vars: { B: 'x=y' },
    });
    expect((await ok(['frames', 'env', 'list', 'web', ...p], env)).vars).toEqual({ B: 'x=y' });
    expect((await run(['frames', 'env', 'set', 'web', 'nope', ...p], env)).code).toBe(2);
    // Said to a person: what runs takes the change at the next deploy, not now.
    const said = await run(['frames', 'env', 'unset', 'web', 'B', ...p], env);
    expect(said.stderr).toContain('web: the change applies at the next deploy');

    expect(await ok(['frames', 'scale', 'web', '3', ...p], env)).toMatchObject({
      replica_count: 3,
    });
    const read = await t.get(
      `/v2/projects/${project.id}/spaces/${frame.space_id}/frames/${frame.id}`,
      {
        token: ann.token,
      },
    );
    const etag = String(read.headers.etag);
    expect(
      await ok(['frames', 'update', 'web', '--name', 'www', '--if-match', etag, ...p], env),
    ).toMatchObject({ name: 'www' });
    const stale = await run(
      ['frames', 'update', 'www', '--name', 'w3', '--if-match', etag, ...p],
      env,
    );
    expect(stale.code).toBe(5);
    expect(stale.stderr).toContain('412');

    const events = await run(['frames', 'events', 'www', ...p, '--json'], env);
    const types = events.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).type);
    expect(types).toContain('created');
    expect(types).toContain('updated');
    const status = await ok(['frames', 'status', 'www', ...p], env);
    expect(status).toMatchObject({ status: 'Starting' });

    expect((await run(['frames', 'delete', 'www', ...p], env)).code).toBe(2); // needs --yes
    expect(await ok(['frames', 'delete', 'www', '--yes', ...p], env)).toMatchObject({
      id: frame.id,
      deleted: true,
    });
    expect(await ok(['frames', 'list', ...p], env)).toEqual([]);
  });
});
