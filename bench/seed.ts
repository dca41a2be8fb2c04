// Writes a drawn dataset through the service's own data layer (Kysely on the same tables, ids
// from newId, token hashes from hashSecret), in multi-row INSERTs of a few thousand rows.
import { sql } from 'kysely';
import type { Insertable } from 'kysely';
import type { Database } from '../src/db/database.ts';
import type { DB } from '../src/db/schema.ts';
import { hashPassword } from '../src/identity/password.ts';
import { hashSecret, type Sealer } from '../src/secrets.ts';
import { hostnameLabel } from '../src/frames/frame-address.ts';
import type { Dataset } from './dataset.ts';
import { at } from '../test/helpers/checked.ts';
import { seedOrgs } from './orgs.ts';

// PostgreSQL takes at most 65,535 parameters per statement.
const MAX_PARAMS = 60_000;
const MAX_ROWS = 5_000;

async function insertAll<T extends keyof DB & string>(
  db: Database,
  table: T,
  rows: Array<Insertable<DB[T]>>,
) {
  if (rows.length === 0) return;
  const per = Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / Object.keys(at(rows, 0)).length));
  for (let i = 0; i < rows.length; i += per) {
    await db
      .insertInto(table)
      .values(rows.slice(i, i + per) as never)
      .execute();
  }
}

/** Writes `data`, prints what each table took, and returns the total in seconds. */
export async function seed(
  db: Database,
  data: Dataset,
  sealer: Sealer,
  log: (line: string) => void,
): Promise<number> {
  const started = performance.now();
  let lap = started;
  const step = async (what: string, rows: number, work: () => Promise<unknown>) => {
    await work();
    const now = performance.now();
    log(
      `  ${what.padEnd(28)} ${(rows ? `${rows} rows` : '').padStart(13)}  ${((now - lap) / 1000).toFixed(1)} s`,
    );
    lap = now;
  };
  const { users, teams, projects, grants, agents, frames } = data;

  // One real argon2id hash for everyone: hashing 100k passwords would take an hour and
  // nothing measured here logs in.
  const passwordHash = await hashPassword('bench-password-not-used');
  await step('users', users.length, () =>
    insertAll(
      db,
      'users',
      users.map((u) => ({
        id: u.id,
        email: u.email,
        name: u.name,
        password_hash: passwordHash,
        created_at: u.createdAt,
      })),
    ),
  );
  await step('access_tokens', users.length, () =>
    insertAll(
      db,
      'access_tokens',
      users.map((u) => ({
        id: u.tokenId,
        user_id: u.id,
        name: 'bench session',
        kind: 'session' as const,
        token_hash: hashSecret(u.token),
        created_at: u.createdAt,
        expires_at: u.tokenExpiresAt,
        last_used_at: null,
        revoked_at: null,
      })),
    ),
  );

  // A team and its owner row must commit together (teams_have_owner is a deferred trigger).
  await step('teams + owner memberships', teams.length * 2, async () => {
    for (let i = 0; i < teams.length; i += MAX_ROWS) {
      const batch = teams.slice(i, i + MAX_ROWS);
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('teams')
          .values(
            batch.map((t) => ({
              id: t.id,
              name: t.name,
              slug: t.slug,
              owner_id: at(users, at(t.members, 0).user).id,
              created_at: t.createdAt,
            })),
          )
          .execute();
        await trx
          .insertInto('team_members')
          .values(
            batch.map((t) => ({
              team_id: t.id,
              user_id: at(users, at(t.members, 0).user).id,
              role: 'owner' as const,
              joined_at: at(t.members, 0).joinedAt,
            })),
          )
          .execute();
      });
    }
  });
  const others = teams.flatMap((t) =>
    t.members.slice(1).map((m) => ({
      team_id: t.id,
      user_id: at(users, m.user).id,
      role: m.role,
      joined_at: m.joinedAt,
    })),
  );
  await step('other memberships', others.length, () => insertAll(db, 'team_members', others));

  await step('projects', projects.length, () =>
    insertAll(
      db,
      'projects',
      projects.map((p) => ({
        id: p.id,
        owner_id: at(users, p.owner).id,
        name: p.name,
        created_at: p.createdAt,
      })),
    ),
  );
  await step('spaces (default)', projects.length, () =>
    insertAll(
      db,
      'spaces',
      projects.map((p) => ({
        id: p.spaceId,
        project_id: p.id,
        name: 'default',
        created_at: p.createdAt,
      })),
    ),
  );
  await step('orgs, members, org projects', data.orgProjects.length, () =>
    seedOrgs(db, data.orgs, data.orgProjects, (u) => at(users, u).id),
  );
  await step('grants', grants.length, () =>
    insertAll(
      db,
      'grants',
      grants.map((g) => ({
        id: g.id,
        team_id: at(teams, g.team).id,
        project_id: at(projects, g.project).id,
        role: g.role,
        created_by: at(users, at(projects, g.project).owner).id,
        created_at: g.createdAt,
      })),
    ),
  );

  await step('cloud agents', agents.length, () =>
    insertAll(
      db,
      'agents',
      agents.map((a) => ({
        id: a.id,
        kind: 'cloud' as const,
        project_id: null,
        name: a.name,
        token_hash: hashSecret(a.token),
        created_at: a.createdAt,
        last_seen_at: null,
      })),
    ),
  );
  // An empty env, sealed once: what a frame created without env vars carries.
  const envSealed = sealer.seal('{}');
  const envDigest = sealer.digest('{}');
  const repo = (f: (typeof frames)[number]) => ({
    git_repository: `app-${f.name}`,
    git_repository_owner: `org-${f.project}`,
    git_repository_branch: 'main',
  });
  await step('frames', frames.length, () =>
    insertAll(
      db,
      'frames',
      frames.map((f) => ({
        id: f.id,
        project_id: at(projects, f.project).id,
        space_id: at(projects, f.project).spaceId,
        owner_id: at(users, at(projects, f.project).owner).id,
        name: f.name,
        hostname_label: hostnameLabel(f.name, f.id),
        ...repo(f),
        port: f.port,
        replica_count: 1,
        runtime_kind: 'cloud' as const,
        agent_id: at(agents, f.agent).id,
        desired_state: 'running' as const,
        generation: 1,
        version: 1,
        env_digest: envDigest,
        created_at: f.createdAt,
        updated_at: f.createdAt,
      })),
    ),
  );
  // The create deployment, rolled out: one healthy replica of generation 1, so frames read as Running.
  const rolledOut = (f: (typeof frames)[number]) => new Date(f.createdAt.getTime() + 60_000);
  await step('deployments (create)', frames.length, () =>
    insertAll(
      db,
      'deployments',
      frames.map((f) => ({
        id: f.deploymentId,
        frame_id: f.id,
        trigger: 'create' as const,
        status: 'succeeded' as const,
        generation: 1,
        ...repo(f),
        commit_sha: null,
        env_sealed: envSealed,
        env_digest: envDigest,
        created_by: at(users, at(projects, f.project).owner).id,
        created_at: f.createdAt,
        finished_at: rolledOut(f),
      })),
    ),
  );
  await step('frame replicas', frames.length, () =>
    insertAll(
      db,
      'frame_replicas',
      frames.map((f) => ({
        frame_id: f.id,
        replica: 0,
        generation: 1,
        state: 'healthy',
        deployment_id: f.deploymentId,
        since: rolledOut(f),
      })),
    ),
  );

  // As autovacuum would have by now on a live database: fresh planner statistics.
  await step('vacuum analyze', 0, () => sql`vacuum analyze`.execute(db));
  // Seeding wrote about a gigabyte: flush it now, or a checkpoint lands in the first measurements
  // (they ran at half speed in one run). CHECKPOINT needs a superuser or pg_checkpoint; without
  // either the server flushes on its own schedule.
  await step('checkpoint', 0, () => sql`checkpoint`.execute(db).catch(() => {}));
  return (performance.now() - started) / 1000;
}
