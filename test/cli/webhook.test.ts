// `frameplane projects webhook show|rotate` against a real service: the printed secret is the
// one the service verifies pushes with, a rotation prints the new one and retires the old, and
// a member who is not an admin is refused.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addMember, newUser } from '../helpers/factories.ts';
import { expectProblem, run, runJson, userEnv } from './run.ts';
import { serviceForFile } from './service.ts';

const svc = serviceForFile();

let pushes = 0;
/** The status a push to the git hook gets when signed with `secret` (202: verified). */
async function pushSignedWith(secret: string, projectId: string) {
  // A new commit each time: a repeated delivery is answered 200 as a duplicate.
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: String(++pushes).padStart(40, 'a'),
    repository: { name: 'app', owner: { login: 'acme' } },
  });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const r = await fetch(`${svc.server}/v2/hooks/git?project=${projectId}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': signature,
    },
    body,
  });
  return r.status;
}

describe('projects webhook', { timeout: 60_000 }, () => {
  it('shows the address and secret, and rotates the secret', async () => {
    const { t, server } = svc;
    const ann = await newUser(t, 'ann');
    const env = userEnv(server, ann.token);
    const project = await runJson(['projects', 'create', 'Shop'], env);

    const shown = await run(['projects', 'webhook', 'show', 'Shop'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const url = /^url:\s+(\S+)$/m.exec(shown.stdout)?.[1];
    const secret = /^secret:\s+(whsec_\S+)$/m.exec(shown.stdout)?.[1] ?? '';
    expect(url).toBe(`http://frameplane.test/v2/hooks/git?project=${project.id}`);
    expect(shown.stdout).toMatch(/^events:\s+push$/m);
    expect(await pushSignedWith(secret, project.id)).toBe(202);

    const rotated = await run(['projects', 'webhook', 'rotate', 'Shop'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = /^secret:\s+(whsec_\S+)$/m.exec(rotated.stdout)?.[1] ?? '';
    expect(fresh).not.toBe(secret);
    expect(rotated.stderr).toContain('Give the git host this new secret');
    expect(await pushSignedWith(fresh, project.id)).toBe(202);
    expect(await pushSignedWith(secret, project.id)).toBe(401);
    expect(await runJson(['projects', 'webhook', 'show', project.id], env)).toMatchObject({
      url,
      secret: fresh,
      events: ['push'],
    });

    // Bob sees the project (a viewer, through a team) but may not read its secret.
    const bob = await newUser(t, 'bob');
    const team = await runJson(['teams', 'create', 'Hook Readers'], env);
    await addMember(t, team.id, bob, 'member');
    await runJson(['share', 'Shop', '--team', 'hook-readers'], env);
    const refused = await run(
      ['projects', 'webhook', 'rotate', project.id],
      userEnv(server, bob.token),
    );
    expectProblem(refused, 5, 403, 'insufficient_role');
  });
});
