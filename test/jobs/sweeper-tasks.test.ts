// The sweep task (src/jobs/sweeper.ts) driven as production drives it: a `sweep` job in
// graphile-worker's queue, run by the worker the service starts, with the real task list. The
// test makes a queued job due (or queues one, as the minute timer does) and waits for the worker
// to run it; the service clock is moved without running the time rules, so only the job applies
// them. Each rule: a pull stuck past three minutes trips the back-off, a cloud frame left without
// an agent is placed, idempotency keys and old log lines expire, and an e-mail whose job was
// lost is queued again and delivered.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_HOURS } from '../../src/jobs/sweeper.ts';
import { PULL_TIMEOUT_SECONDS } from '../../src/frames/backoff.ts';
import { newId } from '../../src/ids.ts';
import { hashSecret, newSecret } from '../../src/secrets.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;
beforeAll(async () => {
  t = await testApp({ worker: true });
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
});
afterAll(async () => {
  await t?.close();
});

let unique = 0;

interface QueuedJob {
  id: string;
  key: string | null;
  task: string;
  run_at: Date;
  attempts: number;
  last_error: string | null;
}

async function queued(where: { key?: string; task?: string }) {
  const rows = await sql<QueuedJob>`select j.id::text, j.key, t.identifier as task, j.run_at,
      j.attempts, j.last_error
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
    where (${where.key ?? null}::text is null or j.key = ${where.key ?? null})
      and (${where.task ?? null}::text is null or t.identifier = ${where.task ?? null})
    order by j.id`.execute(t.db);
  return rows.rows;
}

/** Waits until the job with `id` has left the queue (graphile-worker deletes a finished job). */
async function finished(id: string, what: string) {
  await waitFor(
    `${what} to run`,
    async () => {
      const rows = await sql<QueuedJob>`select j.id::text, j.attempts, j.last_error
        from graphile_worker._private_jobs j where j.id = ${id}::bigint`.execute(t.db);
      const job = rows.rows[0];
      if (job?.last_error) throw new Error(`${what} failed: ${job.last_error}`);
      return job ?? 'gone';
    },
    { until: (job) => job === 'gone', timeoutMs: 30_000, everyMs: 100 },
  );
}

/** Queues a sweep as the minute timer does (a job key of its own) and waits for it to run. */
async function sweep() {
  const key = `test-sweep-${++unique}`;
  await sql`select graphile_worker.add_job('sweep', '{}'::json, job_key := ${key}::text)`.execute(
    t.db,
  );
  const [job] = await queued({ key });
  if (job) await finished(job.id, 'the sweep');
}

/** Moves the service clock alone: the time rules then run only when a job runs them. */
const advance = (seconds: number) => t.clock.advance(seconds);

describe('a pull stuck past three minutes', () => {
  it('is checked by the job the pulling report queued; it stops the frame with backoff_tripped', async () => {
    const agent = await t.post('/v2/admin/agents', {
      token: 'admin-token-for-tests',
      body: { name: 'cloud' },
    });
    expect(agent.status, agent.text).toBe(201);
    const frame = await newFrame(t, ann, project.id, space, { name: 'puller' });
    const reportedAt = Date.now();
    await sync(t, agent.json.token, {
      events: [{ frame_id: frame.id, replica: 0, type: 'pulling' }],
    });

    // The report queued a sweep for the moment the pull would be stuck.
    const checks = (await queued({ task: 'sweep' })).filter((j) =>
      j.key?.startsWith('pull-check-'),
    );
    expect(checks).toHaveLength(1);
    const check = checks[0]!;
    const wait = check.run_at.getTime() - reportedAt;
    expect(wait).toBeGreaterThan((PULL_TIMEOUT_SECONDS - 30) * 1000);
    expect(wait).toBeLessThan((PULL_TIMEOUT_SECONDS + 30) * 1000);

    // Three minutes pass on the service clock; the queued check falls due and the worker runs it.
    await advance(PULL_TIMEOUT_SECONDS + 5);
    await sql`update graphile_worker._private_jobs set run_at = now() where id = ${check.id}::bigint`.execute(
      t.db,
    );
    await finished(check.id, 'the pull check');

    const read = await t.get(framePath(frame), { token: ann.token });
    expect(read.json).toMatchObject({
      desired_state: 'stopped',
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      latest_deployment: { status: 'failed', failure_reason: 'backoff_tripped' },
    });
    const tripped = await t.db
      .selectFrom('frame_events')
      .select(['type', 'detail'])
      .where('frame_id', '=', frame.id)
      .where('type', '=', 'backoff_tripped')
      .execute();
    expect(tripped).toHaveLength(1);
    expect(tripped[0]!.detail).toMatchObject({ cause: 'image_pull_timeout' });
    // The agent is told to stop it.
    const state = await sync(t, agent.json.token);
    expect(state.frames.find((f) => f.frame_id === frame.id)).toMatchObject({
      desired_state: 'stopped',
    });
  });

  it('a pull younger than three minutes, or of a stopped frame, is left alone', async () => {
    const agents = await t.db
      .selectFrom('agents')
      .select('id')
      .where('kind', '=', 'cloud')
      .execute();
    expect(agents.length).toBeGreaterThan(0);
    const token = await agentToken(agents[0]!.id);
    const young = await newFrame(t, ann, project.id, space, { name: 'young' });
    const stopped = await newFrame(t, ann, project.id, space, { name: 'stopped' });
    await sync(t, token, {
      events: [
        { frame_id: young.id, replica: 0, type: 'pulling' },
        { frame_id: stopped.id, replica: 0, type: 'pulling' },
      ],
    });
    expect((await t.post(`${framePath(stopped)}/stop`, { token: ann.token })).status).toBe(202);
    await advance(PULL_TIMEOUT_SECONDS - 30);
    await sweep();
    expect((await t.get(framePath(young), { token: ann.token })).json.desired_state).toBe(
      'running',
    );
    await advance(60);
    await sweep();
    expect((await t.get(framePath(young), { token: ann.token })).json.status_reason).toBe(
      'backoff_tripped',
    );
    const read = await t.get(framePath(stopped), { token: ann.token });
    expect(read.json).toMatchObject({ desired_state: 'stopped' });
    expect(read.json.status_reason).not.toBe('backoff_tripped');
  });
});

/** A new token for an existing agent, written as registration writes it. */
async function agentToken(agentId: string) {
  const token = newSecret('fpa');
  await t.db
    .updateTable('agents')
    .set({ token_hash: hashSecret(token) })
    .where('id', '=', agentId)
    .execute();
  return token;
}

describe('placement', () => {
  it('a cloud frame that missed the registration of a cloud agent is placed by the sweep', async () => {
    // Registration places the frames it sees; a frame committed just after it is the sweep's.
    const owner = await newUser(t, 'placed');
    const p = await newProject(t, owner);
    const s = await defaultSpace(t, owner, p.id);
    const frame = await newFrame(t, owner, p.id, s, { name: 'unplaced' });
    await t.db.updateTable('frames').set({ agent_id: null }).where('id', '=', frame.id).execute();
    const generation = (
      await t.db
        .selectFrom('frames')
        .select('generation')
        .where('id', '=', frame.id)
        .executeTakeFirstOrThrow()
    ).generation;
    await sweep();
    const row = await t.db
      .selectFrom('frames')
      .select(['agent_id', 'generation'])
      .where('id', '=', frame.id)
      .executeTakeFirstOrThrow();
    expect(row.agent_id).toMatch(/^agt_/);
    expect(row.generation).toBe(generation + 1);
    const token = await agentToken(row.agent_id!);
    expect((await sync(t, token)).frames.map((f) => f.frame_id)).toContain(frame.id);
  });
});

describe('expiry', () => {
  it(`idempotency keys live ${IDEMPOTENCY_HOURS} hours of service time`, async () => {
    const post = (key: string) =>
      t.post('/v2/projects', {
        token: ann.token,
        body: { name: `idem-${key}` },
        headers: { 'idempotency-key': key },
      });
    const old = `old-${Date.now()}`;
    expect((await post(old)).status).toBe(201);
    await advance(IDEMPOTENCY_HOURS * 3600 - 60);
    const young = `young-${Date.now()}`;
    expect((await post(young)).status).toBe(201);
    await advance(120);
    await sweep();
    const keys = (await t.db.selectFrom('idempotency_keys').select('key').execute()).map(
      (r) => r.key,
    );
    expect(keys).not.toContain(old);
    expect(keys).toContain(young);
  });

  const LOG_RETENTION = { days: 7, linesPerFrame: 10_000 }; // the defaults
  it(`log lines older than ${LOG_RETENTION.days} days go, and each frame keeps its newest ${LOG_RETENTION.linesPerFrame}`, async () => {
    const agent = await t.db
      .selectFrom('agents')
      .select('id')
      .where('kind', '=', 'cloud')
      .executeTakeFirstOrThrow();
    const token = await agentToken(agent.id);
    const quiet = await newFrame(t, ann, project.id, space, { name: 'quiet' });
    const loud = await newFrame(t, ann, project.id, space, { name: 'loud' });
    const now = t.clock.now().getTime();
    const at = (daysAgo: number) => new Date(now - daysAgo * 86400_000).toISOString();
    await sync(t, token, {
      logs: [
        { frame_id: quiet.id, replica: 0, at: at(LOG_RETENTION.days + 1), line: 'too old' },
        { frame_id: quiet.id, replica: 0, at: at(LOG_RETENTION.days - 1), line: 'kept' },
      ],
    });
    const extra = 25;
    await sql`insert into frame_logs (frame_id, replica, at, line)
      select ${loud.id}, 0, ${new Date(now)}::timestamptz, 'line ' || n
      from generate_series(1, ${LOG_RETENTION.linesPerFrame + extra}) n`.execute(t.db);
    await sweep();
    const lines = async (frameId: string) =>
      (
        await t.db
          .selectFrom('frame_logs')
          .select('line')
          .where('frame_id', '=', frameId)
          .orderBy('id')
          .execute()
      ).map((r) => r.line);
    expect(await lines(quiet.id)).toEqual(['kept']);
    const kept = await lines(loud.id);
    expect(kept).toHaveLength(LOG_RETENTION.linesPerFrame);
    expect(kept[0]).toBe(`line ${extra + 1}`);
    expect(kept.at(-1)).toBe(`line ${LOG_RETENTION.linesPerFrame + extra}`);
  });
});

describe('lost e-mail jobs', () => {
  it('a pending e-mail older than a minute without a job is queued again and delivered', async () => {
    const now = t.clock.now();
    const id = newId('email', now);
    // As after a crash that lost the job: the row is pending and nothing will deliver it.
    await t.db
      .insertInto('emails')
      .values({
        id,
        to_address: 'lost@example.test',
        subject: 'Lost and found',
        sealed_text: t.core.sealer.seal('text'),
        sealed_html: t.core.sealer.seal('<p>html</p>'),
        created_at: new Date(now.getTime() - 30_000),
      })
      .execute();
    await sweep();
    // Thirty seconds old: not yet stuck, nothing queued.
    expect(await queued({ key: id })).toEqual([]);
    expect(
      (
        await t.db
          .selectFrom('emails')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('pending');

    await advance(60);
    await sweep();
    // The worker delivers it (no SMTP_URL in tests: kept and logged).
    const row = await waitFor(
      'the worker to handle the e-mail',
      () =>
        t.db
          .selectFrom('emails')
          .select(['status', 'attempts', 'delivered_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
      { until: (r) => r.status !== 'pending', timeoutMs: 30_000, everyMs: 100 },
    );
    expect(row).toMatchObject({ status: 'logged', attempts: 1 });
    expect(row.delivered_at).toBeInstanceOf(Date);
  });
});
