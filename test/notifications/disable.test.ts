// An endpoint whose receiver fails every try for a day is turned off, and the project's admins
// (not its viewers) get an e-mail through the outbox (a real SMTP listener). Turning it back on
// forgets the failures. The day passes on the operator's clock, not in real time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_DELAYS_SECONDS } from '../../src/notifications/retry.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { addMember, newProject, newTeam, newUser, share } from '../helpers/factories.ts';
import { ADMIN, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { type SmtpCatcher, startSmtp } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver } from './receiver.ts';

let t: TestApp;
let smtp: SmtpCatcher;
let receiver: Receiver;

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver({ answer: () => 503 });
  t = await testApp({
    worker: true,
    env: {
      SMTP_URL: smtp.url,
      NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true',
      NOTIFICATIONS_ALLOW_HTTP: 'true',
    },
  });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  await smtp.close();
});

describe('an endpoint that keeps failing', { timeout: 60_000 }, () => {
  it('is turned off after a day of failures, and the admins are told', async () => {
    const ann = await newUser(t, 'ann');
    const bea = await newUser(t, 'bea'); // an admin through a team
    const vic = await newUser(t, 'vic'); // a viewer
    const project = await newProject(t, ann, 'Failing Shop');
    const admins = await newTeam(t, ann, 'Admins');
    await addMember(t, admins.id, bea, 'admin');
    await share(t, admins.id, project.id, 'admin');
    const viewers = await newTeam(t, ann, 'Viewers');
    await addMember(t, viewers.id, vic, 'viewer');
    await share(t, viewers.id, project.id, 'viewer');
    const created = await t.post(`/v2/projects/${project.id}/notifications`, {
      token: ann.token,
      body: { url: receiver.url, events: ['deploy.started'] },
    });
    expect(created.status, created.text).toBe(201);
    const base = `/v2/projects/${project.id}/notifications/${created.json.id}`;
    const endpoint = async () => (await t.get(base, { token: ann.token })).json;

    // Three deployments start: three deliveries, each tried seven times over 23 h 41 min.
    const space = await defaultSpace(t, ann, project.id);
    const frames = [];
    for (const name of ['a', 'b', 'c'])
      frames.push(await newFrame(t, ann, project.id, space, { name }));
    const triesLogged = (n: number) =>
      waitFor(`${n} failed tries`, async () => {
        const e = await endpoint();
        return e.consecutive_failures >= n && e;
      });
    await triesLogged(3);
    let tries = 3;
    for (const delay of RETRY_DELAYS_SECONDS) {
      const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: delay } });
      expect(r.status, r.text).toBe(200);
      tries += 3;
      await triesLogged(tries);
    }
    // 21 tries failed, but within one day of the first: still on.
    const still = await endpoint();
    expect(still).toMatchObject({ enabled: true, consecutive_failures: 21 });
    const log = (await t.get(`${base}/deliveries`, { token: ann.token })).json.data;
    expect(log.map((d: any) => [d.status, d.attempts.length])).toEqual([
      ['failed', 7],
      ['failed', 7],
      ['failed', 7],
    ]);

    // An hour later the next failure makes it a day: off, and the admins are told.
    await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 3600 } });
    const deploy = await t.post(`${framePath(frames[0])}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    const off = await waitFor('the endpoint to be turned off', async () => {
      const e = await endpoint();
      return !e.enabled && e;
    });
    expect(off).toMatchObject({ disabled_reason: 'failing', consecutive_failures: 22 });
    const mails = await smtp.waitFor((m) => m.length >= 2);
    expect(mails.flatMap((m) => m.rcptTo).sort()).toEqual([ann.email, bea.email].sort());
    expect(smtp.to(vic.email)).toEqual([]);
    const mail = smtp.to(ann.email)[0];
    expect(mail?.subject).toBe('Frameplane turned off a notification endpoint of Failing Shop');
    expect(mail?.text).toContain(receiver.url);
    expect(mail?.text).toContain(`frameplane notifications update ${created.json.id} --enable`);
    const audit = await t.get(`/v2/projects/${project.id}/audit`, { token: ann.token });
    expect(audit.json.data[0]).toMatchObject({ action: 'notification.disabled', actor_id: null });

    // Off: a new event is not queued for it.
    const received = receiver.got.length;
    await t.post(`${framePath(frames[1])}/deploy`, { token: ann.token });
    const after = (await t.get(`${base}/deliveries`, { token: ann.token })).json.data;
    expect(after).toHaveLength(4);
    expect(receiver.got).toHaveLength(received);

    // On again: the failures are forgotten, and events flow.
    const on = await t.patch(base, { token: ann.token, body: { enabled: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toMatchObject({
      enabled: true,
      disabled_reason: null,
      consecutive_failures: 0,
      failing_since: null,
    });
    await t.post(`${framePath(frames[2])}/deploy`, { token: ann.token });
    await receiver.until(received + 1);
  });
});
