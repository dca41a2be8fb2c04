// GET /metrics on the service's port: behind ADMIN_TOKEN as the operator API, Prometheus' text
// format that a parser and promtool accept, and request durations labelled by route template.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, testAppOn, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { ID_PREFIXES } from '../../src/ids.ts';
import { parseMetrics, promtoolProblems, scrape } from './scrape.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('who may read it', () => {
  it('needs the operator token', async () => {
    expect((await t.get('/metrics')).status).toBe(401);
    expect((await t.get('/metrics', { token: 'not-the-admin-token' })).status).toBe(401);
    const ann = await newUser(t, 'ann');
    expect((await t.get('/metrics', { token: ann.token })).status).toBe(401);
  });

  it('does not exist without ADMIN_TOKEN, like the rest of the operator API', async () => {
    const other = await testAppOn(t.url, { env: { ADMIN_TOKEN: '' } });
    try {
      const r = await other.get('/metrics', { token: 'admin-token-for-tests' });
      expect(r.status).toBe(404);
      expect((await other.post('/v2/admin/agents', { body: { name: 'x' } })).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});

describe('the format', () => {
  it("is Prometheus' text format; every family has HELP and TYPE", async () => {
    const r = await t.get('/metrics', { token: 'admin-token-for-tests' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parseMetrics(r.text);
    expect(m.families.length).toBeGreaterThan(20);
    for (const f of m.families) {
      expect(f.help, f.name).not.toBe('');
      expect(f.type, f.name).not.toBe('UNTYPED');
      expect(r.text).toContain(`# HELP ${f.name} `);
      expect(r.text).toContain(`# TYPE ${f.name} `);
    }
    const names = m.families.map((f) => f.name);
    expect(names).toContain('process_cpu_seconds_total');
    expect(names).toContain('nodejs_eventloop_lag_seconds');
    for (const n of names.filter((n) => !/^(process|nodejs)_/.test(n)))
      expect(n).toMatch(/^frameplane_[a-z0-9_]+$/);
  });

  it('passes promtool check metrics (when promtool is installed)', async () => {
    const { text } = await scrape(t);
    const problems = promtoolProblems(text);
    if (problems === undefined) return; // CI installs it (.ci/run)
    expect(problems).toBe('');
  });
});

describe('request durations', () => {
  const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
  const ID = new RegExp(`(${Object.values(ID_PREFIXES).join('|')})_${ULID}|${ULID}`, 'i');

  it('are counted under the route template and class of status, never with an id', async () => {
    const ann = await newUser(t, 'bea');
    const project = await newProject(t, ann);
    const route = '/v2/projects/:project_id';
    const count = (m: Awaited<ReturnType<typeof scrape>>, labels: Record<string, string>) =>
      m.value('frameplane_http_request_duration_seconds_count', {
        route,
        method: 'GET',
        ...labels,
      }) ?? 0;
    const before = await scrape(t);
    expect((await t.get(`/v2/projects/${project.id}`, { token: ann.token })).status).toBe(200);
    expect((await t.get(`/v2/projects/${project.id}`, { token: ann.token })).status).toBe(200);
    expect((await t.get(`/v2/projects/${project.id}`)).status).toBe(401);
    expect((await t.get(`/v2/no/such/${project.id}`)).status).toBe(404);
    const after = await scrape(t);
    expect(count(after, { status_class: '2xx' }) - count(before, { status_class: '2xx' })).toBe(2);
    expect(count(after, { status_class: '4xx' }) - count(before, { status_class: '4xx' })).toBe(1);
    const le = after.value('frameplane_http_request_duration_seconds_bucket', {
      route,
      method: 'GET',
      status_class: '2xx',
      le: '+Inf',
    });
    expect(le).toBe(count(after, { status_class: '2xx' }));
    expect(
      after.value('frameplane_http_request_duration_seconds_count', {
        route: 'unmatched',
        method: 'GET',
        status_class: '4xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    for (const s of after.samples)
      for (const v of Object.values(s.labels)) expect(v, `${s.name} ${v}`).not.toMatch(ID);
    expect(after.text).not.toContain(project.id);
  });
});
