// The minute sweep prunes log lines in one statement: lines past the retention by their own time
// (which the agent reports, so it need not follow the id), and for each frame all but its newest
// LOG_RETENTION.linesPerFrame lines, however its lines interleave with other frames' lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, newFrame } from '../helpers/frames.ts';
import { LOG_RETENTION } from '../../src/jobs/sweeper.ts';
import { pruneLogsStatement } from '../../src/jobs/sweeper-dal.ts';

const DAY = 86400_000;
let t: TestApp;
let frames: string[];
beforeAll(async () => {
  t = await testApp();
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

describe('pruning frame logs', () => {
  it('deletes lines older than the retention, whatever their order, and keeps recent ones', async () => {
    const [a] = frames as [string];
    const now = t.clock.now().getTime();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY);
    const kept = LOG_RETENTION.days - 1;
    const gone = LOG_RETENTION.days + 1;
    await insert([
      { frame_id: a, replica: 0, at: at(gone), line: 'old' },
      { frame_id: a, replica: 0, at: at(kept), line: 'recent' },
      // Reported late with its own old time: a newer id, still past the retention.
      { frame_id: a, replica: 1, at: at(gone), line: 'old, reported late' },
      { frame_id: a, replica: 1, at: at(0), line: 'now' },
    ]);
    await t.services.timeRules.runDue();
    expect(await linesOf(a)).toEqual(['recent', 'now']);
    await t.db.deleteFrom('frame_logs').execute();
  });

  it("keeps each frame's newest lines up to the cap, when frames' lines interleave", async () => {
    const [a, b, c] = frames as [string, string, string];
    const cap = LOG_RETENTION.linesPerFrame;
    const at = t.clock.now();
    const lines: Line[] = [];
    // a and c over the cap, alternating; b far under it, spread across their whole range.
    for (let i = 0; i < cap + 5; i++) {
      for (const f of [a, c]) lines.push({ frame_id: f, replica: 0, at, line: String(i) });
      if (i % 1000 === 0) lines.push({ frame_id: b, replica: 0, at, line: String(i) });
    }
    await insert(lines);
    await t.services.timeRules.runDue();
    const newest = Array.from({ length: cap }, (_, i) => String(i + 5));
    expect(await linesOf(a)).toEqual(newest);
    expect(await linesOf(c)).toEqual(newest);
    expect(await linesOf(b)).toHaveLength(Math.ceil((cap + 5) / 1000));
    await t.db.deleteFrom('frame_logs').execute();
  });

  it('reads frame_logs only through indexes (frame_logs_at for the age)', async () => {
    // With sequential scans disabled the planner still takes one where no index serves the
    // query; so no "Seq Scan on frame_logs" means every read of the table can use an index.
    const plan = await t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const before = new Date(t.clock.now().getTime() - LOG_RETENTION.days * DAY);
      const { rows } = await sql<{
        'QUERY PLAN': string;
      }>`explain ${pruneLogsStatement(before, LOG_RETENTION.linesPerFrame)}`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('frame_logs_at');
    expect(plan).not.toMatch(/Seq Scan on frame_logs/);
  });
});
