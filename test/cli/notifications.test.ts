// `frameplane notifications` against a real service and a real receiver on loopback: the
// secret `add` prints is the one the receiver verifies with; `test` waits for the try and says
// what the receiver answered; redeliver, turn off and on, rotate, remove; the project comes
// from the directory's link; a viewer is refused.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, type TestApp, testApp } from '../helpers/app.ts';
import { addMember, newUser } from '../helpers/factories.ts';
import { type Receiver, startReceiver } from '../notifications/receiver.ts';
import { expectProblem, run, runIn, runJson, userEnv } from './run.ts';

let t: TestApp;
let server: string;
let receiver: Receiver;
let secret: string | undefined;

beforeAll(async () => {
  receiver = await startReceiver({ secret: () => secret });
  t = await testApp({
    worker: true,
    env: { NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true', NOTIFICATIONS_ALLOW_HTTP: 'true' },
  });
  server = await listenOn(t);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const secretOf = (stdout: string) => /^secret:\s+(whsec_\S+)$/m.exec(stdout)?.[1];

describe('notifications', { timeout: 90_000 }, () => {
  it('adds an endpoint whose printed secret verifies, and manages it', async () => {
    const ann = await newUser(t, 'ann');
    const env = userEnv(server, ann.token);
    await runJson(['projects', 'create', 'Shop'], env);

    const added = await run(
      ['notifications', 'add', receiver.url, '--events', 'deploy.failed,frame.error', '-p', 'Shop'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    secret = secretOf(added.stdout);
    expect(secret).toMatch(/^whsec_/);
    expect(added.stdout).toMatch(/^events:\s+deploy\.failed, frame\.error$/m);
    expect(added.stderr).toContain('The secret is shown only now');
    const id = /^id:\s+(ntf_\S+)$/m.exec(added.stdout)?.[1] ?? '';

    // The test event, by the endpoint's URL: sent, verified, and what came back shown.
    const tested = await run(['notifications', 'test', receiver.url, '-p', 'Shop'], env);
    expect(tested.code, tested.stderr).toBe(0);
    expect(receiver.got[0]?.verified).toBe(true);
    expect(tested.stdout).toMatch(/^status:\s+succeeded$/m);
    expect(tested.stdout).toMatch(/^1\s+\S+\s+ok\s+200 in \d+ ms\s+thanks$/m);

    // The project from the directory's link.
    const dir = mkdtempSync(join(tmpdir(), 'frameplane-notifications-'));
    expect((await runIn(dir, ['link', 'Shop'], env)).code).toBe(0);
    const listed = await runIn(dir, ['notifications', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { id, url: receiver.url, events: ['deploy.failed', 'frame.error'], enabled: true },
    ]);

    const log = await runJson(['notifications', 'deliveries', id, '-p', 'Shop'], env);
    expect(log).toMatchObject([{ event_type: 'ping', status: 'succeeded' }]);
    const again = await run(['notifications', 'redeliver', id, log[0].id, '-p', 'Shop'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(receiver.got[1]?.body).toBe(receiver.got[0]?.body);
    const table = await run(['notifications', 'deliveries', id, '-p', 'Shop'], env);
    expect(table.stdout).toMatch(/^ID\s+EVENT\s+STATUS\s+TRIES\s+LAST TRY/m);
    expect(table.stdout.match(/\bping\s+succeeded\s+1\s+200 in/g)).toHaveLength(2);

    const off = await runJson(['notifications', 'update', id, '--disable', '-p', 'Shop'], env);
    expect(off).toMatchObject({ enabled: false, disabled_reason: 'manual' });
    const on = await run(['notifications', 'update', id, '--enable', '-p', 'Shop'], env);
    expect(on.stdout).toMatch(/^state:\s+on$/m);
    const nothing = await run(['notifications', 'update', id, '-p', 'Shop'], env);
    expect(nothing.code).toBe(2);

    // A new secret: the receiver still holds the old one and refuses, which `test` reports.
    const rotated = await run(['notifications', 'rotate-secret', id, '-p', 'Shop'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(secretOf(rotated.stdout)).not.toBe(secret);
    const refused = await run(['notifications', 'test', id, '-p', 'Shop'], env);
    expect(refused.code).toBe(6);
    expect(refused.stdout).toMatch(/^status:\s+failed$/m);
    expect(refused.stdout).toContain('400 in');
    // Rotated again with an overlap: the secret before goes on signing for an hour.
    const rolled = await run(
      ['notifications', 'rotate-secret', id, '--expire-previous-in', '1', '-p', 'Shop'],
      env,
    );
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(rolled.stderr).toMatch(/The previous secret signs too until \d{4}-/);

    // A viewer of the project may not manage its notifications.
    const vic = await newUser(t, 'vic');
    const team = await runJson(['teams', 'create', 'Watchers'], env);
    await addMember(t, team.id, vic, 'viewer');
    await runJson(['share', 'Shop', '--team', 'watchers', '--role', 'viewer'], env);
    const denied = await run(['notifications', 'list', '-p', 'Shop'], userEnv(server, vic.token));
    expectProblem(denied, 5, 403, 'insufficient_role');

    const removed = await run(['notifications', 'remove', id, '-p', 'Shop'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await runJson(['notifications', 'list', '-p', 'Shop'], env)).toEqual([]);
  });
});
