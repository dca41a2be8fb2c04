// One frame's bad item never costs another frame's (issue 34, item 4), without a real service:
// the outbox checks each item against the service's own schema (a bad one repaired or dropped
// alone), a refused report is split per frame and then in halves, and the sync loop drops only
// what a server refuses alone, sending the rest in order.
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SyncBody } from '../../src/agent-api/agents-schemas.ts';
import { validatorCompiler } from '../../src/http/validation.ts';
import { type Invalid, Outbox, SyncClient } from '../../src/runner/client.ts';
import type { SyncEvent } from '../../src/runner/protocol.ts';
import { splitBatch } from '../../src/runner/sync-split.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const AT = '2026-01-02T03:04:05.000Z';
const ev = (frame: string, replica: number, extra: Partial<SyncEvent> = {}): SyncEvent => ({
  frame_id: frame,
  replica,
  type: 'healthy',
  generation: 1,
  ...extra,
});
/** The service's own validator of the sync body, as its route compiles it. */
const serverAccepts = validatorCompiler({
  schema: SyncBody,
  httpPart: 'body',
  method: 'POST',
  url: '/v2/agent/sync',
}) as (body: unknown) => boolean;

describe('the outbox', () => {
  it("repairs or drops alone one frame's bad item, keeping the other frame's", () => {
    const told: Invalid[] = [];
    const outbox = new Outbox(undefined, (bad) => told.push(bad));
    outbox.event(ev('frm_b', 0));
    // What the agent read of a tenant's commit marker: not a commit hash.
    outbox.build({ deployment_id: 'dep_a', state: 'succeeded', commit_sha: '$(id)\n', at: AT });
    outbox.event(ev('frm_a', 1000)); // no such replica: nothing to repair
    outbox.log('frm_b', 0, 'b first');
    outbox.log('frm_a', 0, 'a binary \u0000 output');
    outbox.event(ev('frm_b', 1));
    outbox.log('frm_b', 0, 'b second');

    const batch = outbox.batch();
    expect(batch.builds).toEqual([{ deployment_id: 'dep_a', state: 'succeeded', at: AT }]);
    expect(batch.events).toEqual([ev('frm_b', 0), ev('frm_b', 1)]);
    expect(batch.logs.map((l) => [l.frame_id, l.line])).toEqual([
      ['frm_b', 'b first'],
      ['frm_a', 'a binary \uFFFD output'],
      ['frm_b', 'b second'],
    ]);
    expect(serverAccepts(batch)).toBe(true);
    // One word for each item changed or dropped; repaired lines are not told (an app's output).
    expect(told.map((t) => [t.item.kind, t.dropped])).toEqual([
      ['build', false],
      ['event', true],
    ]);
    expect(told[0]?.why).toMatch(/commit_sha/);
    expect(told[1]?.why).toMatch(/replica/);
  });

  it('cuts what is too long and keeps what the service reads of a detail too big', () => {
    const outbox = new Outbox();
    outbox.build({ deployment_id: 'dep_a', state: 'failed', message: 'e'.repeat(5000), at: AT });
    outbox.event(
      ev('frm_a', 0, { type: 'crashed', detail: { reason: 'crash', dump: 'd'.repeat(1e5) } }),
    );
    const batch = outbox.batch();
    expect(batch.builds?.[0]?.message).toHaveLength(2000);
    expect(batch.events[0]?.detail).toEqual({ reason: 'crash' });
    expect(serverAccepts(batch)).toBe(true);
  });
});

describe('splitting a refused report', () => {
  it('splits per frame first, then in halves, keeping the order', () => {
    const build = { deployment_id: 'dep_a', state: 'building' as const };
    const batch = {
      builds: [build],
      events: [ev('frm_a', 0), ev('frm_b', 0), ev('frm_a', 1)],
      logs: [{ frame_id: 'frm_b', replica: 0, at: AT, line: 'b' }],
    };
    const parts = splitBatch(batch);
    expect(parts).toEqual([
      { builds: [build], events: [], logs: [] },
      { events: [ev('frm_a', 0), ev('frm_a', 1)], logs: [] },
      { events: [ev('frm_b', 0)], logs: batch.logs },
    ]);
    expect(splitBatch(parts[1]!)).toEqual([
      { events: [ev('frm_a', 0)], logs: [] },
      { events: [ev('frm_a', 1)], logs: [] },
    ]);
    expect(splitBatch(parts[0]!)).toEqual([]);
  });
});

/** A server whose schema is newer than the agent's: it refuses any event with `detail.legacy`. */
async function newerServer(refuseAll: () => boolean) {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req
      .on('data', (c) => (text += c))
      .on('end', () => {
        const body = JSON.parse(text || '{}');
        const legacy = (body.events ?? []).some((e: SyncEvent) => e.detail?.legacy);
        res.setHeader('content-type', 'application/json');
        if (refuseAll() || legacy) {
          res.statusCode = 422;
          return res.end(JSON.stringify({ status: 422, detail: 'events.0.detail: not allowed' }));
        }
        bodies.push(body);
        res.end(JSON.stringify({ state: 'x'.repeat(32), frames: [], sync_after_ms: 5000 }));
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies };
}

function client(url: string) {
  const said: any[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => said.push(JSON.parse(s)) });
  const c = new SyncClient({ server: url, token: 'fpa_test', log, onAnswer: () => {} });
  return { c, said };
}

describe('the sync loop, when the server refuses a report', () => {
  it('drops only the item refused alone and delivers the rest, in order', async () => {
    const server = await newerServer(() => false);
    const { c, said } = client(server.url);
    const bad = ev('frm_a', 1, { type: 'crashed', detail: { reason: 'crash', legacy: true } });
    c.outbox.build({ deployment_id: 'dep_a', state: 'building', at: AT });
    for (const e of [ev('frm_b', 0), ev('frm_a', 0), bad, ev('frm_b', 1), ev('frm_a', 2)])
      c.outbox.event(e);
    c.outbox.log('frm_b', 0, 'b line');
    const loop = c.run();
    cleanups.push(() => {
      c.stop();
      return loop;
    });
    const sent = () => server.bodies.flatMap((b) => b.events ?? []) as SyncEvent[];
    await waitFor('four events delivered', sent, { until: (s) => s.length === 4 });
    const of = (frame: string) => sent().filter((e) => e.frame_id === frame);
    expect(of('frm_b')).toEqual([ev('frm_b', 0), ev('frm_b', 1)]);
    expect(of('frm_a')).toEqual([ev('frm_a', 0), ev('frm_a', 2)]);
    expect(server.bodies.flatMap((b) => b.logs ?? []).map((l: any) => l.line)).toEqual(['b line']);
    expect(server.bodies.flatMap((b) => b.builds ?? [])).toHaveLength(1);
    const dropped = said.filter((l) => /dropped/.test(l.msg));
    expect(dropped).toEqual([
      expect.objectContaining({
        frame_id: 'frm_a',
        item: 'event',
        why: expect.stringMatching(/422/),
      }),
    ]);

    // And it goes on: the next report is delivered.
    c.outbox.event(ev('frm_b', 2));
    await waitFor('the next report delivered', () =>
      sent().some((e) => e.frame_id === 'frm_b' && e.replica === 2),
    );
  });

  it('drops nothing when even an empty report is refused, and delivers later', async () => {
    let refusing = true;
    const server = await newerServer(() => refusing);
    const { c, said } = client(server.url);
    c.outbox.event(ev('frm_b', 0));
    c.outbox.event(ev('frm_a', 0));
    const loop = c.run();
    cleanups.push(() => {
      c.stop();
      return loop;
    });
    await waitFor('a refused sync', () => said.some((l) => /sync failed/.test(l.msg)));
    refusing = false;
    await waitFor('a report delivered', () => server.bodies.some((b) => b.events?.length));
    expect(server.bodies.flatMap((b) => b.events ?? [])).toEqual([ev('frm_b', 0), ev('frm_a', 0)]);
    expect(said.filter((l) => /dropped/.test(l.msg))).toEqual([]);
  });
});
