// Webhooks' rows: each project's sealed secret, the deliveries remembered against replay, and
// the frames a push deploys.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { payerBillingSql } from '../frames/frames-dal.ts';

export async function sealedSecretOf(q: Queryable, projectId: string) {
  const row = await q
    .selectFrom('project_webhooks')
    .select('secret_sealed')
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row?.secret_sealed;
}

/** Stores a project's secret; with `replace` false, one already stored is kept. */
export async function storeSecret(
  q: Queryable,
  projectId: string,
  sealed: string,
  at: Date,
  replace: boolean,
) {
  await q
    .insertInto('project_webhooks')
    .values({ project_id: projectId, secret_sealed: sealed, rotated_at: at })
    .onConflict((oc) =>
      replace
        ? oc.column('project_id').doUpdateSet({ secret_sealed: sealed, rotated_at: at })
        : oc.column('project_id').doNothing(),
    )
    .execute();
}

/** Projects with a frame watching the repository, on any branch (names compared ignoring case). */
export async function projectsWatching(q: Queryable, owner: string, repo: string) {
  const rows = await q
    .selectFrom('frames')
    .select('project_id')
    .distinct()
    .where(sql`lower(git_repository_owner)`, '=', owner.toLowerCase())
    .where(sql`lower(git_repository)`, '=', repo.toLowerCase())
    .execute();
  return rows.map((r) => r.project_id);
}

export function sealedSecretsOf(q: Queryable, projectIds: string[]) {
  if (projectIds.length === 0) return Promise.resolve([]);
  return q
    .selectFrom('project_webhooks')
    .select(['project_id', 'secret_sealed'])
    .where('project_id', 'in', projectIds)
    .execute();
}

export async function forgetExpiredDeliveries(q: Queryable, now: Date) {
  await sql`delete from webhook_deliveries where keep_until < ${now}`.execute(q);
}

/**
 * Remembers a delivery for each project; answers the projects that had not seen it. A
 * concurrent copy waits on the unique key until the first one's transaction ends, then inserts
 * nothing.
 */
export async function rememberDelivery(
  q: Queryable,
  projectIds: string[],
  d: { bodySha: string; deliveryId: string | null; receivedAt: Date; keepUntil: Date },
) {
  const { rows } = await sql<{
    project_id: string;
  }>`insert into webhook_deliveries (project_id, body_sha256, delivery_id, received_at, keep_until)
    select p, ${d.bodySha}, ${d.deliveryId}, ${d.receivedAt}, ${d.keepUntil}
    from unnest(${projectIds}::text[]) as p
    on conflict do nothing returning project_id`.execute(q);
  return rows.map((r) => r.project_id);
}

/** The projects' frames watching the repository and branch, in id order, with the payer's billing. */
export function framesWatchingBranch(
  q: Queryable,
  projectIds: string[],
  w: { owner: string; repo: string; branch: string },
) {
  return (
    q
      .selectFrom('frames as f')
      .innerJoin('projects as p', 'p.id', 'f.project_id')
      .select(['f.id', payerBillingSql('p').as('billing_status')])
      .where('f.project_id', 'in', projectIds)
      .where(sql`lower(f.git_repository_owner)`, '=', w.owner.toLowerCase())
      .where(sql`lower(f.git_repository)`, '=', w.repo.toLowerCase())
      .where('f.git_repository_branch', '=', w.branch)
      // Previews are deployed by the previews' rule (previews/previews.ts), once.
      .where('f.preview_of', 'is', null)
      .orderBy('f.id')
      .execute()
  );
}

/**
 * Locks, in id order, every frame of the projects watching the repository (on any branch,
 * previews included): what a delivery may deploy, make previews of or remove. Taken first, in
 * one order, so that deliveries of two branches cannot deadlock on each other's frames.
 */
export function lockFramesOfRepository(
  q: Queryable,
  projectIds: string[],
  w: { owner: string; repo: string },
) {
  return q
    .selectFrom('frames')
    .select('id')
    .where('project_id', 'in', projectIds)
    .where(sql`lower(git_repository_owner)`, '=', w.owner.toLowerCase())
    .where(sql`lower(git_repository)`, '=', w.repo.toLowerCase())
    .orderBy('id')
    .forUpdate()
    .execute();
}

export function lockFrame(q: Queryable, frameId: string) {
  return q
    .selectFrom('frames')
    .selectAll()
    .where('id', '=', frameId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}
