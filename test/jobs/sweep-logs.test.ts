// The minute sweep prunes log lines by the three bounds of LOG_RETENTION_*: their age on the
// service clock (the agent reports each line's time, so it need not follow the id), and each
// frame's newest lines within a count and a byte total, however frames' lines interleave.
// Lines go oldest first, in batches of LOG_DELETE_BATCH.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, newFrame } from '../helpers/frames.ts';
import { ageCut, batchQuery, LOG_DELETE_BATCH } from '../../src/jobs/log-retention-dal.ts';

const DAY = 86400_000;
const LINES = 1000;
const BYTES = 64 * 1024;
let t: TestApp;
let frames: string[];
beforeAll(async () => {
  t = await testApp({
    env: {
      LOG_RETENTION_DAYS: '3',
      LOG_RETENTION_LINES_PER_FRAME: String(LINES),
      LOG_RETENTION_BYTES_PER_FRAME: String(BYTES),
    },
  });
  const ann = await newUser(t, 'ann');
  const project = await newProject(t, ann);
  const space = await defaultSpace(t, ann, project.id);
  frames = [];
  for (const name of ['a', 'b', 'c'])
    frames.push((await newFrame(t, ann, project.id, space, { name })).id as string);
});
afterAll(async () => {
  await t?.close();
});

type Line = { frame_id: string; replica: number; at: Date; line: string };
async function insert(lines: Line[]) {
  for (let i = 0; i < lines.length; i += 5000)
    await t.db
      .insertInto('frame_logs')
      .values(lines.slice(i, i + 5000))
      .execute();
}
const linesOf = async (frameId: string) =>
  (
    await t.db
      .selectFrom('frame_logs')
      .select(['id', 'line'])
      .where('frame_id', '=', frameId)
      .orderBy('id')
      .execute()
  ).map((r) => r.line);
const bytesOf = async (frameId: string) =>
  (
    await t.db
      .selectFrom('frame_log_sizes')
      .select('bytes')
      .where('frame_id', '=', frameId)
      .executeTakeFirst()
  )?.bytes ?? 0;
const clear = () => t.db.deleteFrom('frame_logs').execute();

describe('pruning frame logs', () => {
  it('deletes lines past LOG_RETENTION_DAYS on the service clock, whatever their order', async () => {
    const [a] = frames as [string];
    const at = (daysAgo: number) => new Date(t.clock.now().getTime() - daysAgo * DAY);
    await insert([
      { frame_id: a, replica: 0, at: at(4), line: 'old' },
      { frame_id: a, replica: 0, at: at(2), line: 'two days' },
      // Reported late with its own old time: a newer id, still past the retention.
      { frame_id: a, replica: 1, at: at(4), line: 'old, reported late' },
      { frame_id: a, replica: 1, at: at(0), line: 'now' },
    ]);
    await t.services.timeRules.runDue();
    expect(await linesOf(a)).toEqual(['two days', 'now']);
    // A day and a half later on the test clock, the two-day-old line is past three days.
    await t.clock.advance(1.5 * 86400);
    await t.services.timeRules.runDue();
    expect(await linesOf(a)).toEqual(['now']);
    await clear();
  });

  it('deletes more than one batch of old lines in one sweep', async () => {
    const [a] = frames as [string];
    const old = new Date(t.clock.now().getTime() - 5 * DAY);
    await sql`insert into frame_logs (frame_id, replica, at, line)
      select ${a}, 0, ${old}::timestamptz, 'old ' || n
      from generate_series(1, ${LOG_DELETE_BATCH * 2 + 7}) n`.execute(t.db);
    await t.services.timeRules.runDue();
    expect(await linesOf(a)).toEqual([]);
    expect(await bytesOf(a)).toBe(0);
  });

  it("keeps each frame's newest LOG_RETENTION_LINES_PER_FRAME lines, interleaved", async () => {
    const [a, b, c] = frames as [string, string, string];
    const at = t.clock.now();
    const lines: Line[] = [];
    // a and c over the cap, alternating; b far under it, spread across their whole range.
    for (let i = 0; i < LINES + 5; i++) {
      for (const f of [a, c]) lines.push({ frame_id: f, replica: 0, at, line: String(i) });
      if (i % 100 === 0) lines.push({ frame_id: b, replica: 0, at, line: String(i) });
    }
    await insert(lines);
    await t.services.timeRules.runDue();
    const newest = Array.from({ length: LINES }, (_, i) => String(i + 5));
    expect(await linesOf(a)).toEqual(newest);
    expect(await linesOf(c)).toEqual(newest);
    expect(await linesOf(b)).toHaveLength(Math.ceil((LINES + 5) / 100));
    await clear();
  });

  it("keeps each frame's newest lines within LOG_RETENTION_BYTES_PER_FRAME", async () => {
    const [a, b] = frames as [string, string];
    const at = t.clock.now();
    // 1 KiB lines (ASCII: a byte a character): 100 of them are 100 KiB, over the 64 KiB bound.
    const kib = (i: number) => `${String(i).padStart(4, '0')} ${'x'.repeat(1019)}`;
    await insert(
      Array.from({ length: 100 }, (_, i) => ({ frame_id: a, replica: 0, at, line: kib(i) })),
    );
    // b's lines are multi-byte: 10 KiB of characters, 30 KiB of UTF-8, twice: 60 KiB, kept.
    const wide = 'é'.repeat(5 * 1024) + '€'.repeat(5 * 1024);
    await insert([0, 1].map((i) => ({ frame_id: b, replica: 0, at, line: wide + i })));
    expect(await bytesOf(a)).toBe(100 * 1024);
    await t.services.timeRules.runDue();
    const kept = await linesOf(a);
    expect(kept).toHaveLength(64);
    expect(kept[0]?.slice(0, 4)).toBe('0036');
    expect(kept.at(-1)?.slice(0, 4)).toBe('0099');
    expect(await bytesOf(a)).toBe(64 * 1024);
    expect(await linesOf(b)).toHaveLength(2);
    await clear();
    expect(await bytesOf(a)).toBe(0);
  });

  it('reads old lines through frame_logs_at, oldest first, never the whole table', async () => {
    // With sequential scans disabled the planner still takes one where no index serves the
    // query; so no "Seq Scan on frame_logs" means the batch can use an index.
    const plan = await t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const cut = ageCut(t.clock.now());
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${batchQuery(cut)}`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('frame_logs_at');
    expect(plan).not.toMatch(/Seq Scan on frame_logs/);
  });
});
