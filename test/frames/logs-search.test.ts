// Searching a frame's logs (issue 39): `q`, `since`/`until`, `replica` and `source` on the logs
// page, and the same filters on the text download; over inject against real PostgreSQL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/factories.ts';
import { frameWithReaders, sync } from '../helpers/frames.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const world = (name: string) => frameWithReaders(t, name);

const lines = (r: { json: any }) => r.json.data.map((l: any) => l.line);
const query = (o: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(o).map(([k, v]) => [k, String(v)])).toString();

describe('searching logs', () => {
  it('finds one line among 100,000 within 1 s, through the trigram index', async () => {
    const { ann, frame, path } = await world('search-big');
    await sql`insert into frame_logs (frame_id, replica, at, line)
      select ${frame.id}, n % 3, now(), 'GET /items/' || n || ' 200 in ' || (n % 97) || ' ms'
      from generate_series(1, 100000) n`.execute(t.db);
    await sql`insert into frame_logs (frame_id, replica, at, line)
      values (${frame.id}, 1, now(), 'PANIC: Disk Quota exceeded on /data')`.execute(t.db);
    await sql`analyze frame_logs`.execute(t.db);

    const started = performance.now();
    const found = await t.get(`${path}/logs?q=disk%20quota`, { token: ann.token });
    const ms = performance.now() - started;
    expect(found.status, found.text).toBe(200);
    expect(lines(found)).toEqual(['PANIC: Disk Quota exceeded on /data']);
    expect(found.json.next_cursor).toBeNull();
    // Tens of milliseconds here; 1 s leaves room for a machine busy with other tests.
    expect(ms).toBeLessThan(1000);

    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select id from frame_logs
      where frame_id = ${frame.id} and line ilike '%disk quota%' order by id limit 101`.execute(
      t.db,
    );
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('frame_logs_line_trgm');
    await t.db.deleteFrom('frame_logs').where('frame_id', '=', frame.id).execute();
  });

  it('takes %, _ and \\ in q literally', async () => {
    const { ann, agent, frame, path } = await world('search-wildcards');
    const texts = ['50% off', '50 off', 'a_b', 'axb', 'c:\\temp', 'c:temp'];
    await sync(t, agent.token, {
      logs: texts.map((line) => ({
        frame_id: frame.id,
        replica: 0,
        at: '2030-01-01T00:00:00Z',
        line,
      })),
    });
    const search = async (q: string) =>
      lines(await t.get(`${path}/logs?${query({ q })}`, { token: ann.token }));
    expect(await search('0% O')).toEqual(['50% off']);
    expect(await search('a_b')).toEqual(['a_b']);
    expect(await search('%')).toEqual(['50% off']);
    expect(await search('_')).toEqual(['a_b']);
    expect(await search('c:\\t')).toEqual(['c:\\temp']);
  });

  it('combines q, since, until, replica and source, and pages the result', async () => {
    const { ann, viewer, outsider, agent, frame, path } = await world('search-filters');
    const at = (s: number) => `2030-01-01T00:00:${String(s).padStart(2, '0')}Z`;
    const logs = [];
    for (let s = 0; s < 20; s++)
      logs.push({
        frame_id: frame.id,
        replica: s % 2,
        at: at(s),
        line: `${s % 4 === 0 ? 'error' : 'info'} ${s}`,
        ...(s >= 16 ? { source: 'build' } : {}),
      });
    await sync(t, agent.token, { logs });

    const filters = { q: 'ERROR', since: at(2), until: at(16), replica: 0, source: 'app' };
    const first = await t.get(`${path}/logs?${query({ ...filters, limit: 2 })}`, {
      token: viewer.token,
    });
    expect(first.status, first.text).toBe(200);
    expect(lines(first)).toEqual(['error 4', 'error 8']);
    expect(first.json.data[0]).toMatchObject({ replica: 0, source: 'app' });
    const cursor = first.json.next_cursor;
    const second = await t.get(`${path}/logs?${query({ ...filters, limit: 2, cursor })}`, {
      token: viewer.token,
    });
    expect(lines(second)).toEqual(['error 12']);
    expect(second.json.next_cursor).toBeNull();

    const build = await t.get(`${path}/logs?${query({ source: 'build' })}`, { token: ann.token });
    expect(lines(build)).toEqual(['error 16', 'info 17', 'info 18', 'info 19']);
    const tail = await t.get(`${path}/logs?${query({ q: 'info', replica: 1, tail: 2 })}`, {
      token: ann.token,
    });
    expect(lines(tail)).toEqual(['info 17', 'info 19']);

    const hidden = await t.get(`${path}/logs?q=error`, { token: outsider.token });
    expectProblem(hidden, 404);
  });

  it('refuses bad filters with 422 problems', async () => {
    const { ann, path } = await world('search-bad');
    const bad = async (qs: string, download = false) =>
      expectProblem(
        await t.get(`${path}/logs${download ? '/download' : ''}?${qs}`, { token: ann.token }),
        422,
        'validation_failed',
      );
    await bad('since=yesterday');
    const since = await t.get(`${path}/logs?since=yesterday`, { token: ann.token });
    expect(since.json.detail).toContain('since: must be an RFC 3339 date-time');
    await bad('until=2030-13-45T00:00:00Z');
    await bad(query({ q: 'x'.repeat(201) }));
    await bad('q=');
    await bad('source=stdout');
    await bad('replica=-1');
    await bad('until=soon', true);
    await bad(query({ q: 'x'.repeat(201) }), true);
  });
});

describe('GET …/logs/download', () => {
  it('streams every matching line as an attachment, past one page', async () => {
    const { ann, viewer, outsider, frame, path } = await world('search-download');
    await sql`insert into frame_logs (frame_id, replica, at, line, source)
      select ${frame.id}, n % 2, '2030-01-01T00:00:00Z'::timestamptz + n * interval '1 second',
        case when n % 2 = 0 then 'even ' else 'odd ' end || n, 'app'
      from generate_series(1, 5000) n`.execute(t.db);

    const r = await t.get(`${path}/logs/download?q=even`, { token: viewer.token });
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="[\w.-]+-logs\.txt"$/);
    // Streamed: no length known up front.
    expect(r.headers['content-length']).toBeUndefined();
    const got = r.text.split('\n').filter(Boolean);
    expect(got).toHaveLength(2500);
    expect(got[0]).toBe('2030-01-01T00:00:02.000Z app[0] even 2');
    expect(got.at(-1)).toBe('2030-01-01T01:23:20.000Z app[0] even 5000');

    const window = await t.get(
      `${path}/logs/download?${query({ since: '2030-01-01T00:00:10Z', until: '2030-01-01T00:00:14Z', replica: 1 })}`,
      { token: ann.token },
    );
    expect(window.text).toBe(
      '2030-01-01T00:00:11.000Z app[1] odd 11\n' + '2030-01-01T00:00:13.000Z app[1] odd 13\n',
    );
    expectProblem(await t.get(`${path}/logs/download`, { token: outsider.token }), 404);
  });
});
