// Wake-ups after commit (src/db/waker.ts): the wake-ups of one event-loop turn go out in one
// statement, each once, and flush() waits for them; a database error is reported, not thrown.
// Asked for inside transaction(), they wait for its commit and are dropped on a rollback.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDatabase, type Database, transaction } from '../../src/db/database.ts';
import { createWaker, wakeAfterCommit } from '../../src/db/waker.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

let url: string;
let db: Database;
let listener: pg.Client;
let statements = 0;
const heard: Array<[string, string]> = [];

beforeAll(async () => {
  url = await freshDatabaseUrl();
  db = createDatabase(url, { max: 2, onStatement: () => statements++ });
  // Both connections open before anything is counted: postgres.js reads the array types on
  // each new connection first.
  await Promise.all([sql`select 1`.execute(db), sql`select 2`.execute(db)]);
  listener = new pg.Client({ connectionString: url });
  await listener.connect();
  listener.on('notification', (n) => heard.push([n.channel, n.payload ?? '']));
  await listener.query('listen frameplane_agent');
  await listener.query('listen frameplane_frame_events');
});
afterAll(async () => {
  await listener.end();
  await db.destroy();
});

/** Statements sent on `db`'s connections while `work` runs. */
async function statementsDuring(work: () => Promise<void>) {
  const before = statements;
  await work();
  return statements - before;
}

let barriers = 0;
/**
 * Waits until every notification committed so far has reached the listener: PostgreSQL
 * delivers them in commit order, so once a NOTIFY sent now is heard, so is every earlier one.
 * The barrier's own notification is then taken out of `heard`.
 */
async function settle() {
  const mark = `barrier-${++barriers}`;
  await listener.query(`select pg_notify('frameplane_agent', $1)`, [mark]);
  await waitFor(`the listener to hear ${mark}`, () => heard.some(([, p]) => p === mark));
  for (let i = heard.length - 1; i >= 0; i--)
    if (heard[i]![1].startsWith('barrier-')) heard.splice(i, 1);
}

describe('the waker', () => {
  it("sends one turn's wake-ups in one statement, each once, and flush waits for them", async () => {
    heard.length = 0;
    const waker = createWaker(db);
    const sent = await statementsDuring(async () => {
      waker.wake('frameplane_frame_events', 'frm_a');
      waker.wake('frameplane_agent', 'agt_1');
      waker.wake('frameplane_frame_events', 'frm_b');
      waker.wake('frameplane_frame_events', 'frm_a'); // the same wake-up again: sent once
      waker.wake('frameplane_agent', null); // no agent: nothing to wake
      await waker.flush();
    });
    expect(sent).toBe(1);
    await settle();
    expect(heard.sort()).toEqual([
      ['frameplane_agent', 'agt_1'],
      ['frameplane_frame_events', 'frm_a'],
      ['frameplane_frame_events', 'frm_b'],
    ]);
  });

  it('sends the wake-ups of a later turn in a statement of their own', async () => {
    heard.length = 0;
    const waker = createWaker(db);
    waker.wake('frameplane_agent', 'agt_2');
    await waker.flush();
    waker.wake('frameplane_agent', 'agt_3');
    await waker.flush();
    await settle();
    expect(heard).toEqual([
      ['frameplane_agent', 'agt_2'],
      ['frameplane_agent', 'agt_3'],
    ]);
  });

  it('reports a failed statement to onError and keeps working', async () => {
    const other = createDatabase(url, { max: 1 });
    const waker = createWaker(other);
    const errors: unknown[] = [];
    waker.onError = (err) => errors.push(err);
    waker.wake('frameplane_agent', 'agt_4');
    await waker.flush();
    await other.destroy(); // every statement on it now fails
    waker.wake('frameplane_agent', 'agt_5');
    await expect(waker.flush()).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });

  it('holds the wake-ups of a transaction until it commits, and drops them on a rollback', async () => {
    // Only this test's wake-ups: a late one of an earlier test may still arrive under load.
    const mine = () => heard.filter(([, p]) => p.startsWith('agt_t'));
    heard.length = 0;
    const waker = createWaker(db);
    const one = sql<number>`select 1 as x`;
    // BEGIN, the statement, COMMIT: the wake-up is not a statement of the transaction.
    const inside = await statementsDuring(() =>
      transaction(db, async (trx) => {
        await wakeAfterCommit(trx, 'frameplane_agent', 'agt_t1');
        await one.execute(trx);
      }),
    );
    expect(inside).toBe(3);
    await waker.flush();
    await settle();
    expect(mine()).toEqual([['frameplane_agent', 'agt_t1']]);

    heard.length = 0;
    await expect(
      transaction(db, async (trx) => {
        await wakeAfterCommit(trx, 'frameplane_agent', 'agt_t2');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await waker.flush();
    await settle();
    expect(mine()).toEqual([]);

    // Outside transaction(): a NOTIFY in the transaction itself, delivered at its commit.
    await db.transaction().execute((trx) => wakeAfterCommit(trx, 'frameplane_agent', 'agt_t3'));
    await settle();
    expect(mine()).toEqual([['frameplane_agent', 'agt_t3']]);
  });
});
