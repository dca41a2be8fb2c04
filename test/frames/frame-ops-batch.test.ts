// Several stops in one statement (src/frames/frame-ops-dal.ts writeOperations): each frame
// whose row is still the version read is written with its events and audit record; one that
// moved in between is left whole, events included, and its write answers undefined.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { cloudWorld, framePath, newFrame } from '../helpers/frames.ts';
import { type OperationWrite, writeOperations } from '../../src/frames/frame-ops-dal.ts';
import { frameEventRow } from '../../src/frames/frame-events.ts';
import { auditRow } from '../../src/audit/audit-dal.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

describe('stops of several frames in one statement', () => {
  it('write each frame still as read, and leave whole the one that moved', async () => {
    const { ann, project, space } = await cloudWorld(t);
    const frames = [];
    for (let i = 0; i < 3; i++) frames.push(await newFrame(t, ann, project.id, space));
    const read = await Promise.all(
      frames.map(async (f) => {
        const seen = await t.services.frames.forCaller(ann.id, project.id, space, f.id);
        if (!seen) throw new Error(`frame ${f.id} not found`);
        return seen;
      }),
    );
    const now = new Date();
    const stop = (f: (typeof read)[number]): OperationWrite => ({
      frameId: f.id,
      projectId: f.project_id,
      spaceId: f.space_id,
      unchangedSince: f.row_version,
      set: {
        desired_state: 'stopped',
        updated_at: now,
        clears_backoff: false,
        last_status: 'Stopped',
        last_status_reason: 'stopping',
        generation: f.generation + 1,
        version: f.version + 1,
      },
      events: [
        frameEventRow(f.id, now, { type: 'stop', actorId: ann.id, detail: {} }, f.last_event_id),
      ],
      audit: auditRow({ userId: ann.id, requestId: 'test' }, now, {
        projectId: f.project_id,
        action: 'frame.stop',
        targetType: 'frame',
        targetId: f.id,
      }),
    });
    // The middle frame moves after it was read.
    const renamed = await t.patch(framePath(frames[1]!), {
      token: ann.token,
      body: { name: 'moved' },
    });
    expect(renamed.status).toBe(200);

    const written = await writeOperations(t.db, read.map(stop).reverse());
    expect(written.map((w) => w?.desired_state)).toEqual(['stopped', undefined, 'stopped']);

    for (const [i, f] of read.entries()) {
      const row = await t.db
        .selectFrom('frames')
        .select(['desired_state', 'generation', 'last_event_id', 'name'])
        .where('id', '=', f.id)
        .executeTakeFirstOrThrow();
      const stops = await t.db
        .selectFrom('frame_events')
        .select('id')
        .where('frame_id', '=', f.id)
        .where('type', '=', 'stop')
        .execute();
      const audits = await t.db
        .selectFrom('audit_events')
        .select('id')
        .where('target_id', '=', f.id)
        .where('action', '=', 'frame.stop')
        .execute();
      if (i === 1) {
        expect(row).toMatchObject({ desired_state: 'running', generation: f.generation });
        expect(row.name).toBe('moved');
        expect(stops).toEqual([]);
        expect(audits).toEqual([]);
      } else {
        expect(row).toMatchObject({ desired_state: 'stopped', generation: f.generation + 1 });
        expect(stops.map((e) => e.id)).toEqual([row.last_event_id]);
        expect(audits).toHaveLength(1);
      }
    }
  });
});
