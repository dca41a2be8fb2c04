// The SDK against a real service on a real socket: tokens, problems as FrameplaneError, every
// page of a list, Idempotency-Key, If-Match and the SSE streams. Nothing is mocked; the only
// wrapper around fetch records what was sent.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFrameplane, FrameplaneError } from '../../src/sdk/index.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser, type TestUser } from '../helpers/factories.ts';
import { sync } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  // Once in CI's run against a PostgreSQL server, app.close() waited past the hook's minute for
  // a connection of this file's fetches (as an aborted, reused keep-alive connection did in
  // test/frames/sync-http.test.ts; not reproduced alone). The tests are over: end them all.
  t.app.server.closeAllConnections();
  await t.close();
});

const client = (user: TestUser, sent: Request[] = []) =>
  createFrameplane({
    server,
    token: user.token,
    fetch: (input, init) => {
      const request = new Request(input, init);
      sent.push(request.clone());
      return fetch(request);
    },
  });

/** A project, a self-hosted agent of it and a frame placed on that agent. */
async function frameOnAgent(user: TestUser) {
  const fp = client(user);
  const project = await fp.call(fp.api.POST('/v2/projects', { body: { name: 'Shop' } }));
  const path = { project_id: project.id };
  const spaces = await fp.all((cursor) =>
    fp.api.GET('/v2/projects/{project_id}/spaces', { params: { path, query: { cursor } } }),
  );
  const agent = await fp.call(
    fp.api.POST('/v2/projects/{project_id}/agents', { params: { path }, body: { name: 'box' } }),
  );
  const frame = await fp.call(
    fp.api.POST('/v2/projects/{project_id}/spaces/{space_id}/frames', {
      params: { path: { ...path, space_id: spaces[0]!.id } },
      body: {
        name: 'web',
        owner_id: user.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
        agent_id: agent.id,
      },
    }),
  );
  return { fp, project, agent, frame };
}

describe('calls', () => {
  it('sends the bearer token and returns typed data', async () => {
    const ann = await newUser(t, 'ann');
    const me = await client(ann).call(client(ann).api.GET('/v2/user'));
    expect(me).toMatchObject({ id: ann.id, email: ann.email });
  });

  it('turns a problem into a FrameplaneError: status, code, detail, field errors', async () => {
    const ann = await newUser(t, 'ann');
    const fp = client(ann);
    const missing = await fp
      .call(fp.api.GET('/v2/projects/{project_id}', { params: { path: { project_id: 'prj_0' } } }))
      .catch((e) => e);
    expect(missing).toBeInstanceOf(FrameplaneError);
    expect(missing).toMatchObject({ status: 404, code: 'project_not_found' });
    expect(missing.detail).not.toBe('');
    expect(missing.requestId).toBeTruthy();

    const invalid = await fp
      .call(fp.api.POST('/v2/teams', { body: { name: '', slug: 'NO SPACES' } }))
      .catch((e) => e);
    expect(invalid).toMatchObject({ status: 422 });
    expect(invalid.errors.length).toBeGreaterThan(0);
    expect(invalid.errors[0]).toHaveProperty('path');

    const anonymous = createFrameplane({ server });
    const refused = await anonymous.call(anonymous.api.GET('/v2/user')).catch((e) => e);
    expect(refused).toMatchObject({ status: 401 });
  });

  it('reports a service that does not answer as FrameplaneError status 0', async () => {
    const fp = createFrameplane({ server: 'http://127.0.0.1:1' });
    const err = await fp.call(fp.api.GET('/v2/user')).catch((e) => e);
    expect(err).toMatchObject({ status: 0, code: 'unreachable' });
  });
});

describe('lists', () => {
  it('iterates over every page of a cursor list', async () => {
    const ann = await newUser(t, 'ann');
    const sent: Request[] = [];
    const fp = client(ann, sent);
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const name of names) await fp.call(fp.api.POST('/v2/projects', { body: { name } }));
    sent.length = 0;
    const seen: string[] = [];
    for await (const p of fp.pages((cursor) =>
      fp.api.GET('/v2/projects', { params: { query: { limit: 2, cursor } } }),
    ))
      seen.push(p.name);
    expect(seen.sort()).toEqual(names);
    expect(sent.length).toBe(3); // 2 + 2 + 1
  });
});

describe('writes', () => {
  it('puts an Idempotency-Key on every POST; a repeated key creates nothing twice', async () => {
    const ann = await newUser(t, 'ann');
    const sent: Request[] = [];
    const fp = client(ann, sent);
    await fp.call(fp.api.POST('/v2/projects', { body: { name: 'a' } }));
    await fp.call(fp.api.POST('/v2/projects', { body: { name: 'b' } }));
    const keys = sent.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);

    const again = () =>
      fp.call(
        fp.api.POST('/v2/projects', { body: { name: 'c' }, headers: { 'idempotency-key': 'k-1' } }),
      );
    const first = await again();
    const second = await again();
    expect(second.id).toBe(first.id);
    const all = await fp.all((cursor) =>
      fp.api.GET('/v2/projects', { params: { query: { cursor } } }),
    );
    expect(all.filter((p) => p.name === 'c')).toHaveLength(1);
  });

  it('sends If-Match when given: a stale ETag is refused with 412', async () => {
    const ann = await newUser(t, 'ann');
    const { fp, frame } = await frameOnAgent(ann);
    const read = await fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', {
      params: {
        path: { project_id: frame.project_id, space_id: frame.space_id, frame_id: frame.id },
      },
    });
    const etag = read.response.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    const first = await fp.updateFrame(frame, { name: 'web-2' }, { ifMatch: etag });
    expect(first.frame.name).toBe('web-2');
    expect(first.etag).not.toBe(etag);
    const stale = await fp.updateFrame(frame, { name: 'web-3' }, { ifMatch: etag }).catch((e) => e);
    expect(stale).toBeInstanceOf(FrameplaneError);
    expect(stale.status).toBe(412);
  });
});

/** Reads `events` until the frame's stop, which it sends once the stream follows. */
async function untilStopped<T extends { type: string }>(
  fp: ReturnType<typeof client>,
  frame: { project_id: string; space_id: string; id: string },
  events: AsyncIterable<{ data: T }>,
) {
  const seen: T[] = [];
  const before = t.following();
  const reading = (async () => {
    for await (const e of events) {
      seen.push(e.data);
      if (e.data.type === 'stop') break;
    }
  })();
  // The stream sends what is committed after its start: the stop comes once it follows.
  await waitFor('the stream to follow', () => t.following() > before);
  await fp.call(
    fp.api.POST('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/stop', {
      params: {
        path: { project_id: frame.project_id, space_id: frame.space_id, frame_id: frame.id },
      },
    }),
  );
  await reading;
  return seen;
}

describe('streams', () => {
  it('follows log lines and frame events as async iterators', async () => {
    const ann = await newUser(t, 'ann');
    const { fp, agent, frame } = await frameOnAgent(ann);
    const now = new Date().toISOString();
    const line = (text: string) => ({ frame_id: frame.id, replica: 0, at: now, line: text });
    await sync(t, agent.token, { logs: [line('one'), line('two')] });

    const abort = new AbortController();
    const lines: string[] = [];
    const logs = fp.logs(frame, {}, abort.signal);
    for await (const e of logs) {
      expect(e.event).toBe('log');
      lines.push(e.data.line);
      if (lines.length === 2) await sync(t, agent.token, { logs: [line('three')] });
      if (lines.length === 3) break; // ends the request too
    }
    expect(lines).toEqual(['one', 'two', 'three']);

    const seen = await untilStopped(fp, frame, fp.events(frame, {}, abort.signal));
    expect(seen.map((e) => e.type)).toContain('stop');
    abort.abort();
  });

  it("follows a space's frames on one connection (the project stream)", async () => {
    const ann = await newUser(t, 'ann');
    const { fp, agent, frame } = await frameOnAgent(ann);
    await sync(t, agent.token); // online: a stop goes to it
    const abort = new AbortController();
    const events = fp.projectEvents(frame.project_id, { space_id: frame.space_id }, abort.signal);
    const seen = await untilStopped(fp, frame, events);
    expect(seen.at(-1)).toMatchObject({
      type: 'stop',
      frame_id: frame.id,
      space_id: frame.space_id,
    });
    abort.abort();
  });
});
