// A frame's logs and events (CONTRACT 5): pages over inject, live streams over a real socket
// read with Node's fetch. Every stream is aborted by the test that opened it; every wait is bounded.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser } from '../helpers/factories.ts';
import {
  cloudAgent,
  frameWithReaders,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  sync,
} from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';
import { openEventStream, type SseEvent } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t.close();
});

/** Opens a stream of this app and collects its events in the background. */
const openStream = (path: string, token: string, headers: Record<string, string> = {}) =>
  openEventStream(`${origin}${path}`, token, headers);

const logsOf = (s: Awaited<ReturnType<typeof openStream>>) => s.of('log').map((e) => e.data.line);

/** Waits until `n` streams opened since `before` (t.following()) follow: read their start. */
const untilFollowing = (before: number, n = 1) =>
  waitFor(`${n} new stream(s) to follow`, () => t.following() >= before + n);

const world = (name: string) => frameWithReaders(t, name);

const line = (frameId: string, text: string, at = new Date().toISOString(), replica = 0) => ({
  frame_id: frameId,
  replica,
  at,
  line: text,
});

describe('GET …/logs', () => {
  it('pages lines oldest first with limit and cursor, filters by since, tails, and checks its input', async () => {
    const { ann, viewer, outsider, agent, frame, path } = await world('cloud-logs-page');
    const second = (s: number) => `2030-01-01T00:00:0${s}Z`;
    await sync(t, agent.token, {
      logs: [0, 1, 2, 3, 4].map((i) => line(frame.id, `line ${i}`, second(i), i % 2)),
    });

    const all = await t.get(`${path}/logs`, { token: ann.token });
    expect(all.status, all.text).toBe(200);
    expect(all.json.next_cursor).toBeNull();
    expect(all.json.data.map((l: any) => l.line)).toEqual([
      'line 0',
      'line 1',
      'line 2',
      'line 3',
      'line 4',
    ]);
    expect(all.json.data[1]).toEqual({
      id: expect.stringMatching(/^\d+$/),
      replica: 1,
      at: '2030-01-01T00:00:01.000Z',
      line: 'line 1',
      source: 'app',
    });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.get(`${path}/logs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token: ann.token,
      });
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.data.map((l: any) => l.line));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);

    const since = await t.get(`${path}/logs?since=${encodeURIComponent(second(3))}`, {
      token: ann.token,
    });
    expect(since.json.data.map((l: any) => l.line)).toEqual(['line 3', 'line 4']);
    const tail = await t.get(`${path}/logs?tail=2`, { token: ann.token });
    expect(tail.json).toEqual({
      data: [
        expect.objectContaining({ line: 'line 3' }),
        expect.objectContaining({ line: 'line 4' }),
      ],
      next_cursor: null,
    });
    const tailSince = await t.get(`${path}/logs?tail=10&since=${encodeURIComponent(second(2))}`, {
      token: ann.token,
    });
    expect(tailSince.json.data.map((l: any) => l.line)).toEqual(['line 2', 'line 3', 'line 4']);

    expectProblem(await t.get(`${path}/logs?limit=1001`, { token: ann.token }), 422);
    expectProblem(await t.get(`${path}/logs?tail=0`, { token: ann.token }), 422);
    expectProblem(await t.get(`${path}/logs?since=yesterday`, { token: ann.token }), 422);
    expectProblem(
      await t.get(`${path}/logs?cursor=bogus`, { token: ann.token }),
      422,
      'invalid_cursor',
    );
    expectProblem(
      await t.get(`${path}/logs?tail=2&cursor=${all.json.data[0].id}`, { token: ann.token }),
      422,
      'tail_with_cursor',
    );

    // Viewers read logs (CONTRACT 3); a caller who cannot reach the project sees nothing there.
    expect((await t.get(`${path}/logs`, { token: viewer.token })).json.data).toHaveLength(5);
    expectProblem(await t.get(`${path}/logs`, { token: outsider.token }), 404);
    expectProblem(await t.get(`${path}/logs`), 401);
  });

  it('ignores lines an agent sends for a frame placed on another agent', async () => {
    const { ann, frame, path } = await world('cloud-logs-own');
    const intruder = await cloudAgent(t, 'cloud-logs-intruder');
    await sync(t, intruder.token, { logs: [line(frame.id, 'not mine to send')] });
    expect((await t.get(`${path}/logs`, { token: ann.token })).json.data).toEqual([]);
  });
});

describe('GET …/events', () => {
  it('lists operations and status changes oldest first, in pages', async () => {
    const { ann, viewer, outsider, agent, frame, path } = await world('cloud-events-page');
    await sync(t, agent.token, { events: replicaEvents(frame.id, 1, 'healthy') });
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);

    const all = await t.get(`${path}/events?limit=200`, { token: ann.token });
    expect(all.status, all.text).toBe(200);
    const types = all.json.data.map((e: any) => e.type);
    expect(types[0]).toBe('created');
    expect(types).toContain('stop');
    const ids = all.json.data.map((e: any) => e.id);
    expect([...ids].sort()).toEqual(ids);
    expect(all.json.data.find((e: any) => e.type === 'stop')).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'stop',
      status: null,
      status_reason: null,
      detail: { noop: false },
      actor_id: ann.id,
      at: expect.any(String),
    });
    expect(all.json.data.filter((e: any) => e.type === 'status').map((e: any) => e.status)).toEqual(
      ['Starting', 'Online', 'Stopped'],
    );

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.get(`${path}/events?limit=1${cursor ? `&cursor=${cursor}` : ''}`, {
        token: viewer.token,
      });
      expect(page.status).toBe(200);
      paged.push(...page.json.data.map((e: any) => e.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(paged).toEqual(ids);
    expectProblem(await t.get(`${path}/events`, { token: outsider.token }), 404);

    // The newest two, oldest first: where a page that shows the recent history starts.
    const tail = await t.get(`${path}/events?tail=2`, { token: viewer.token });
    expect(tail.status, tail.text).toBe(200);
    expect(tail.json).toEqual({ data: all.json.data.slice(-2), next_cursor: null });
    const first: any = await t.get(`${path}/events?limit=1`, { token: ann.token });
    const both = await t.get(`${path}/events?tail=2&cursor=${first.json.next_cursor}`, {
      token: ann.token,
    });
    expectProblem(both, 422, 'tail_with_cursor');
  });
});

describe('streams (Accept: text/event-stream)', () => {
  it('streams log lines sent after connecting promptly, and resumes after Last-Event-ID without duplicates', async () => {
    const { ann, agent, frame, path } = await world('cloud-logs-stream');
    await sync(t, agent.token, { logs: ['a', 'b', 'c'].map((s) => line(frame.id, s)) });

    const s1 = await openStream(`${path}/logs`, ann.token);
    try {
      expect(s1.res.status).toBe(200);
      expect(s1.res.headers.get('content-type')).toContain('text/event-stream');
      await s1.until(() => s1.of('log').length === 3); // the recent lines come first
      expect(logsOf(s1)).toEqual(['a', 'b', 'c']);
      const sentAt = Date.now();
      await sync(t, agent.token, {
        logs: [line(frame.id, 'd'), line(frame.id, 'e', undefined, 1)],
      });
      // Pushed, not found by the stream's periodic re-check (RECHECK_MS, 15 s).
      await s1.until(() => s1.of('log').length === 5);
      expect(Date.now() - sentAt).toBeLessThan(10_000);
      expect(logsOf(s1)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(at(s1.of('log'), 4).data).toMatchObject({ replica: 1, line: 'e' });
      expect(s1.of('log').map((e) => e.id)).toEqual(s1.of('log').map((e) => e.data.id));
      expect(s1.raw.some((b) => /^id: \d+\nevent: log\ndata: \{/.test(b))).toBe(true);
    } finally {
      await s1.close();
    }

    // Reconnect as EventSource would, having seen up to "d"; "f" arrives while away.
    await sync(t, agent.token, { logs: [line(frame.id, 'f')] });
    const seenD = at(s1.of('log'), 3).id!;
    const s2 = await openStream(`${path}/logs`, ann.token, { 'last-event-id': seenD });
    try {
      await s2.until(() => s2.of('log').length >= 2);
      await sync(t, agent.token, { logs: [line(frame.id, 'g')] });
      await s2.until(() => logsOf(s2).includes('g'));
      // A fixed time on purpose: proves no duplicate follows "g" (nothing to wait for arrives).
      await new Promise((r) => setTimeout(r, 100));
      expect(logsOf(s2)).toEqual(['e', 'f', 'g']);
    } finally {
      await s2.close();
    }

    // ?tail=N starts with the newest N lines; ?since= with every line from that time on, old or live.
    const s3 = await openStream(`${path}/logs?tail=2`, ann.token);
    try {
      await s3.until(() => s3.of('log').length === 2);
      expect(logsOf(s3)).toEqual(['f', 'g']);
    } finally {
      await s3.close();
    }
    const cut = '2031-01-01T00:00:00Z';
    await sync(t, agent.token, {
      logs: [
        line(frame.id, 'h', '2031-01-01T00:00:01Z'),
        line(frame.id, 'early', '2030-12-31T00:00:00Z'),
      ],
    });
    const s4 = await openStream(`${path}/logs?since=${encodeURIComponent(cut)}`, ann.token);
    try {
      await s4.until(() => s4.of('log').length === 1);
      await sync(t, agent.token, {
        logs: [
          line(frame.id, 'late report', '2030-12-31T00:00:00Z'),
          line(frame.id, 'i', '2031-01-01T00:00:02Z'),
        ],
      });
      await s4.until(() => logsOf(s4).includes('i'));
      expect(logsOf(s4)).toEqual(['h', 'i']);
    } finally {
      await s4.close();
    }
  });

  it('streams a status event when the agent reports healthy and a stop event after POST …/stop; resumes by Last-Event-ID', async () => {
    const { ann, viewer, agent, frame, path } = await world('cloud-events-stream');
    const before = t.following();
    const s1 = await openStream(`${path}/events`, viewer.token);
    let all: SseEvent[];
    try {
      expect(s1.res.status).toBe(200);
      // Following: the report below is committed after the stream's start, so it is sent.
      await untilFollowing(before);
      // Nothing from before the connection (an old event would also come first in `all`).
      expect(s1.events).toEqual([]);
      await sync(t, agent.token, { events: replicaEvents(frame.id, 1, 'healthy') });
      await s1.until(() =>
        s1.events.some((e) => e.data.type === 'status' && e.data.status === 'Online'),
      );
      await t.post(`${path}/stop`, { token: ann.token });
      await s1.until(() => s1.events.some((e) => e.data.type === 'stop'));
      await s1.until(() => s1.events.some((e) => e.data.status === 'Stopped'));
      expect(s1.events.every((e) => e.event === 'frame_event' && e.id === e.data.id)).toBe(true);
      all = [...s1.events];
      expect(all.map((e) => e.data.type)).toEqual(['status', 'stop', 'status']);
    } finally {
      await s1.close();
    }

    const s2 = await openStream(`${path}/events`, viewer.token, {
      'last-event-id': at(all, 0).id!,
    });
    try {
      await s2.until(() => s2.events.length >= 2);
      // A fixed time on purpose: proves nothing more follows (nothing to wait for arrives).
      await new Promise((r) => setTimeout(r, 100));
      expect(s2.events.map((e) => e.id)).toEqual(all.slice(1).map((e) => e.id));
    } finally {
      await s2.close();
    }
  });

  it('ends with `event: end` when the frame is deleted', async () => {
    const { ann, frame, path } = await world('cloud-stream-delete');
    const before = t.following();
    const logs = await openStream(`${path}/logs`, ann.token);
    const events = await openStream(`${path}/events`, ann.token);
    try {
      await untilFollowing(before, 2); // so the deletion's wake-up ends them, not their start
      expect((await t.del(path, { token: ann.token })).status).toBe(200);
      for (const s of [logs, events]) {
        await s.until(() => s.ended);
        expect(s.events.at(-1)).toEqual({ event: 'end', data: { reason: 'frame_deleted' } });
      }
      expect(frame.id).toBeTruthy();
    } finally {
      await logs.close();
      await events.close();
    }
  });

  it('ends with `event: end` once the token it was opened with is logged out, or revoked', async () => {
    const { ann, path } = await world('cloud-stream-logout');
    const personal = async () =>
      (await t.post('/v2/user/tokens', { token: ann.token, body: { name: 'stream' } })).json;
    const [a, b] = [await personal(), await personal()];
    const before = t.following();
    const logs = await openStream(`${path}/logs`, a.token);
    const events = await openStream(`${path}/events`, b.token);
    try {
      await untilFollowing(before, 2); // so the revocation's wake-up ends them, not their start
      expect((await t.post('/v2/auth/logout', { token: a.token })).status).toBeLessThan(300);
      expect((await t.del(`/v2/user/tokens/${b.id}`, { token: ann.token })).status).toBeLessThan(
        300,
      );
      for (const s of [logs, events]) {
        // Well before the periodic re-check: the revocation's notification ends it.
        await s.until(() => s.ended, 10_000);
        expect(s.events.at(-1)).toEqual({ event: 'end', data: { reason: 'token_revoked' } });
      }
    } finally {
      await logs.close();
      await events.close();
    }
  });

  it('a shutdown ends open streams instead of waiting for them', async () => {
    const t2 = await testApp();
    let closed = false;
    try {
      await t2.app.listen({ port: 0, host: '127.0.0.1' });
      const ann = await newUser(t2, 'ann');
      const project = await newProject(t2, ann);
      const frame = await newFrame(t2, ann, project.id, await defaultSpace(t2, ann, project.id));
      const abort = new AbortController();
      const res = await fetch(
        `http://127.0.0.1:${(t2.app.server.address() as AddressInfo).port}${framePath(frame)}/events`,
        {
          headers: { accept: 'text/event-stream', authorization: `Bearer ${ann.token}` },
          signal: abort.signal,
        },
      );
      expect(res.status).toBe(200);
      const drained = res.text().catch(() => '');
      const started = Date.now();
      await t2.close();
      closed = true;
      // An open stream would hold close() for ever; any bound well under the test's timeout will do.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await drained).toContain('retry:');
      abort.abort();
    } finally {
      if (!closed) await t2.close();
    }
  });

  it('checks access before streaming: problem answers for outsiders, anonymous callers and bad ids', async () => {
    const { ann, viewer, outsider, path } = await world('cloud-stream-access');
    for (const suffix of ['logs', 'events']) {
      const refused = await fetch(`${origin}${path}/${suffix}`, {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${outsider.token}` },
      });
      expect(refused.status).toBe(404);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect((await refused.json()).code).toBe('project_not_found');
      expectProblem(
        await t.get(`${path}/${suffix}`, { headers: { accept: 'text/event-stream' } }),
        401,
      );
      expectProblem(
        await t.get(`${path}/${suffix}`, {
          token: ann.token,
          headers: { accept: 'text/event-stream', 'last-event-id': 'nope' },
        }),
        422,
        'invalid_last_event_id',
      );
      const ok = await openStream(`${path}/${suffix}`, viewer.token);
      try {
        expect(ok.res.status).toBe(200);
      } finally {
        await ok.close();
      }
    }
  });
});
