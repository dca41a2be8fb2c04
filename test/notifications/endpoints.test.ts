// The endpoints' API: only a project's admins manage them (a member or a viewer is refused 403,
// an outsider is told the project does not exist), what the service refuses to save (URLs it
// would never send to, as a field error; a literal private address never gets a connection),
// and the changes an admin makes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS } from '../../src/notifications/notifications-service.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };

beforeAll(async () => {
  // Plain http allowed, private addresses not (the default).
  t = await testApp({ env: { NOTIFICATIONS_ALLOW_HTTP: 'true' } });
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann, 'Shop');
});
afterAll(() => t.close());

const url = 'https://hooks.example.com/frameplane';
const create = (token: string, body: unknown, p = project.id) =>
  t.post(`/v2/projects/${p}/notifications`, { token, body });

describe('notification endpoints', () => {
  it('are managed by admins only: members and viewers 403, outsiders 404', async () => {
    const mia = await newUser(t, 'mia');
    const vic = await newUser(t, 'vic');
    const ada = await newUser(t, 'ada');
    const oscar = await newUser(t, 'oscar');
    const roles: Array<[TestUser, 'member' | 'viewer' | 'admin']> = [
      [mia, 'member'],
      [vic, 'viewer'],
      [ada, 'admin'],
    ];
    for (const [user, role] of roles) {
      const team = await newTeam(t, ann, `${role}s`);
      await addMember(t, team.id, user, role);
      await share(t, team.id, project.id, role);
    }
    const made = await create(ann.token, { url, events: ['deploy.failed'] });
    expect(made.status, made.text).toBe(201);
    const one = `/v2/projects/${project.id}/notifications/${made.json.id}`;
    for (const user of [mia, vic]) {
      expectProblem(await create(user.token, { url, events: ['deploy.failed'] }), 403);
      expectProblem(await t.get(`/v2/projects/${project.id}/notifications`, user), 403);
      expectProblem(await t.patch(one, { token: user.token, body: { enabled: false } }), 403);
      expectProblem(await t.post(`${one}/test`, user), 403);
      expectProblem(await t.get(`${one}/deliveries`, user), 403);
    }
    expectProblem(await t.get(one, oscar), 404, 'project_not_found');
    expectProblem(await create(oscar.token, { url, events: ['deploy.failed'] }), 404);
    const list = await t.get(`/v2/projects/${project.id}/notifications`, ada);
    expect(list.status).toBe(200);
    expect(list.json.data.map((e: any) => e.id)).toEqual([made.json.id]);
    expect(list.json.data[0].secret).toBeUndefined();
    // Another project's endpoint is not found under this one.
    const other = await newProject(t, ann, 'Other');
    expectProblem(
      await t.get(`/v2/projects/${other.id}/notifications/${made.json.id}`, ann),
      404,
      'notification_endpoint_not_found',
    );
  });

  it('refuses URLs it would never send to, before any connection', async () => {
    const refused = [
      'http://127.0.0.1:9/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0x7f.1/hook',
      'http://2130706433/hook',
      'http://localhost:9/hook',
      'http://api.localhost/hook',
      'http://10.1.2.3/hook',
      'http://172.16.0.9/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://0.0.0.0/hook',
      'http://255.255.255.255/hook',
      'ftp://hooks.example.com/x',
      'https://user:pw@hooks.example.com/x',
      'not a url',
    ];
    const before = (await t.get(`/v2/projects/${project.id}/notifications`, ann)).json.data;
    for (const u of refused) {
      const r = await create(ann.token, { url: u, events: ['deploy.failed'] });
      // Not a URL at all is the schema's (format: uri); the rest the service's rule.
      expectProblem(r, 422, u === 'not a url' ? 'validation_failed' : 'url_not_allowed');
      expect(r.json.errors[0].path, u).toBe('url');
    }
    const after = (await t.get(`/v2/projects/${project.id}/notifications`, ann)).json.data;
    expect(after).toHaveLength(before.length);
    const r = await create(ann.token, { url: 'http://127.0.0.1/x', events: ['deploy.failed'] });
    expect(r.json.errors[0].message).toMatch(/loopback.*NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES/);
  });

  it('validates the events and the format, and holds a bounded number per project', async () => {
    const p = await newProject(t, ann, 'Bounded');
    expectProblem(await create(ann.token, { url, events: [] }, p.id), 422);
    expectProblem(await create(ann.token, { url, events: ['deploy.nope'] }, p.id), 422);
    expectProblem(await create(ann.token, { url, events: ['ping'] }, p.id), 422);
    expectProblem(
      await create(ann.token, { url, events: ['frame.online', 'frame.online'] }, p.id),
      422,
    );
    expectProblem(
      await create(ann.token, { url, events: ['frame.online'], format: 'xml' }, p.id),
      422,
    );
    for (let i = 0; i < MAX_ENDPOINTS; i++)
      expect((await create(ann.token, { url, events: ['frame.error'] }, p.id)).status).toBe(201);
    expectProblem(
      await create(ann.token, { url, events: ['frame.error'] }, p.id),
      422,
      'too_many_endpoints',
    );
  });

  it('changes, turns off and on, rotates and removes', async () => {
    const made = await create(ann.token, { url, events: ['deploy.failed'] });
    const one = `/v2/projects/${project.id}/notifications/${made.json.id}`;
    expect(made.json).toMatchObject({ format: 'json', enabled: true, disabled_reason: null });
    const changed = await t.patch(one, {
      token: ann.token,
      body: { events: ['frame.error', 'member.removed'], format: 'slack', enabled: false },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      events: ['frame.error', 'member.removed'],
      format: 'slack',
      enabled: false,
      disabled_reason: 'manual',
    });
    expectProblem(await t.patch(one, { token: ann.token, body: {} }), 422);
    expectProblem(
      await t.patch(one, { token: ann.token, body: { url: 'http://10.0.0.1/' } }),
      422,
      'url_not_allowed',
    );
    const rotated = await t.post(`${one}/secret`, ann);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(made.json.secret);
    const audit = await t.get(`/v2/projects/${project.id}/audit`, ann);
    const actions = audit.json.data.map((a: any) => a.action);
    expect(actions.slice(0, 3)).toEqual([
      'notification.secret_rotated',
      'notification.updated',
      'notification.created',
    ]);
    // The audit log keeps the host, not the URL (a Slack URL is a secret of its own).
    expect(JSON.stringify(audit.json.data)).not.toContain('/frameplane');
    expect((await t.del(one, ann)).status).toBe(204);
    expectProblem(await t.get(one, ann), 404, 'notification_endpoint_not_found');
  });
});
