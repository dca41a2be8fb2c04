// A receiver on this machine is refused at delivery when the operator does not allow private
// addresses, whether the URL names 127.0.0.1 or `localhost`: the endpoints were saved by an
// instance that allowed them, then the deliveries run on one that does not (same database,
// the setting changed). The loopback receiver sees no connection at all; each refusal is a
// failed try in the log, saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, testAppOn } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, newFrame } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver } from './receiver.ts';

let allowing: TestApp;
let strict: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  allowing = await testApp({
    env: { NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true', NOTIFICATIONS_ALLOW_HTTP: 'true' },
  });
  strict = await testAppOn(allowing.url, {
    worker: true,
    env: { NOTIFICATIONS_ALLOW_HTTP: 'true' },
  });
});
afterAll(async () => {
  await strict.close();
  await allowing.close();
  await receiver.close();
});

describe('a private receiver, with NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES off', () => {
  it('is refused before any connection, by address and by name', { timeout: 30_000 }, async () => {
    const ann = await newUser(allowing, 'ann');
    const project = await newProject(allowing, ann, 'Shop');
    const urls = [receiver.url, `http://localhost:${receiver.port}/hooks/frameplane`];
    const bases: string[] = [];
    for (const url of urls) {
      const r = await allowing.post(`/v2/projects/${project.id}/notifications`, {
        token: ann.token,
        body: { url, events: ['deploy.started'] },
      });
      expect(r.status, r.text).toBe(201);
      bases.push(`/v2/projects/${project.id}/notifications/${r.json.id}`);
    }

    // On the strict instance: a test event to each, and a real event to both.
    for (const base of bases) expect((await strict.post(`${base}/test`, ann)).status).toBe(202);
    const space = await defaultSpace(strict, ann, project.id);
    await newFrame(strict, ann, project.id, space);

    for (const [i, base] of bases.entries()) {
      const log = await waitFor(`both deliveries to ${urls[i]} tried`, async () => {
        const r = await strict.get(`${base}/deliveries`, ann);
        const data = r.json.data as any[];
        return data.length === 2 && data.every((d) => d.attempts.length === 1) && data;
      });
      expect(log.map((d) => d.event_type)).toEqual(['deploy.started', 'ping']);
      for (const d of log) {
        expect(d.attempts[0]).toMatchObject({ ok: false, status_code: null });
        expect(d.attempts[0].error).toMatch(/^Refused: /);
      }
      // The automatic one is retried on its schedule (the setting may change back).
      expect(log[0].status).toBe('pending');
      expect(log[1].status).toBe('failed');
    }
    const [byAddress, byName] = await Promise.all(
      bases.map(async (b) => (await strict.get(`${b}/deliveries`, ann)).json.data[0].last_error),
    );
    expect(byAddress).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(byName).toMatch(/localhost, which is this machine/);
    expect(receiver.connections()).toBe(0);
    expect(receiver.got).toEqual([]);
  });
});
