// Frames (spec 2 and 4, CONTRACT 5): create, read, list, update, delete. Operations that change
// what runs (stop, start, deploy) are in frame-ops-service.ts.
import { sql } from 'kysely';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { decideProject, type AccessService } from '../access/access-service.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import { leastLoadedCloudAgent } from './placement-dal.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { AppError, fieldError, notFound } from '../http/errors.ts';
import { newId } from '../ids.ts';
import { completeIfHealthy, startDeployment } from './deployments.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from './frame-events.ts';
import { etagOf, presentFrame } from './frame-view.ts';
import { frameForCaller, frameInProject, framesWithFacts, lockFrame } from './frames-dal.ts';
import type { FrameStatus } from './frame-status.ts';
import { pageById } from '../db/paging.ts';

export interface FrameInput {
  name: string;
  owner_id: string;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  port: number;
  replica_count?: number;
  agent_id?: string;
  health_check_path?: string;
}
export interface FrameUpdate {
  name?: string;
  git_repository_name?: string;
  git_repository_owner?: string;
  git_repository_branch?: string;
  port?: number;
  replica_count?: number;
  health_check_path?: string;
}

/** What is wrong with a health check path, if anything (the rule of frames.health_check_path's CHECK). */
export function healthCheckPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must start with "/"';
  if ([...path].length > 200) return 'must be at most 200 characters';
  if (/[\s\p{Cc}]/u.test(path))
    return 'must not contain whitespace or control characters (percent-encode them)';
  return undefined;
}

function checkHealthCheckPath(path: string | undefined) {
  const problem = path === undefined ? undefined : healthCheckPathProblem(path);
  if (problem) {
    throw fieldError(
      'health_check_path',
      'invalid_health_check_path',
      `health_check_path ${problem}: send the path the agent should probe, such as "/healthz".`,
    );
  }
}

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  notifier?: Notifier;
  offlineAfterSeconds: number;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  deploymentHistory: number;
}

export function createFramesService({
  db,
  clock,
  access,
  sealer,
  notifier,
  offlineAfterSeconds,
  deploymentHistory,
}: Deps) {
  const view = (f: NonNullable<Awaited<ReturnType<typeof frameInProject>>>) =>
    presentFrame(f, clock.now(), offlineAfterSeconds);

  async function load(
    projectId: string,
    spaceId: string | undefined,
    frameId: string,
    q: Queryable = db,
  ) {
    const f = await frameInProject(q, projectId, spaceId, frameId);
    if (!f) throw notFound('frame');
    return f;
  }

  async function requireSpace(projectId: string, spaceId: string) {
    const s = await db
      .selectFrom('spaces')
      .select('id')
      .where('id', '=', spaceId)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    if (!s) throw notFound('space');
  }

  /** The frame with the caller's role on its project, in one query (the role memo's, on the pool). */
  function forCaller(
    userId: string,
    projectId: string,
    spaceId: string,
    frameId: string,
    q: Queryable = db,
  ) {
    return access.withRole(q, userId, projectId, (remembered) =>
      frameForCaller(q, projectId, spaceId, frameId, userId, remembered),
    );
  }

  return {
    load,
    view,
    forCaller,

    async create(actor: Actor, projectId: string, spaceId: string, input: FrameInput) {
      await access.requireProject(actor.userId, projectId, 'frame.manage');
      await requireSpace(projectId, spaceId);
      checkHealthCheckPath(input.health_check_path);
      if (!(await access.roleOf(input.owner_id, projectId)))
        throw fieldError(
          'owner_id',
          'owner_not_allowed',
          'owner_id must be a user who can reach this project.',
        );
      if (input.agent_id) {
        const agent = await db
          .selectFrom('agents')
          .select('id')
          .where('id', '=', input.agent_id)
          .where('project_id', '=', projectId)
          .executeTakeFirst();
        if (!agent)
          throw fieldError(
            'agent_id',
            'agent_not_found',
            'agent_id must be a self-hosted agent of this project.',
          );
      }
      const now = clock.now();
      const id = await transaction(db, async (trx) => {
        const agentId = input.agent_id ?? (await leastLoadedCloudAgent(trx));
        const frame = await trx
          .insertInto('frames')
          .values({
            id: newId('frame', now),
            project_id: projectId,
            space_id: spaceId,
            owner_id: input.owner_id,
            name: input.name,
            git_repository: input.git_repository,
            git_repository_owner: input.git_repository_owner,
            git_repository_branch: input.git_repository_branch,
            port: input.port,
            replica_count: input.replica_count ?? 1,
            health_check_path: input.health_check_path ?? '/',
            runtime_kind: input.agent_id ? 'agent' : 'cloud',
            agent_id: agentId,
            env_digest: sealer.digest('{}'),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await startDeployment(trx, sealer, frame, {
          trigger: 'create',
          at: now,
          actorId: actor.userId,
          keep: deploymentHistory,
        });
        await recordFrameEvent(trx, frame.id, now, { type: 'created', actorId: actor.userId });
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'frame.created',
          targetType: 'frame',
          targetId: frame.id,
          after: input,
        });
        await refreshStatus(trx, [frame.id], now);
        await notifyAgents(trx, [agentId]);
        return frame.id;
      });
      return view(await load(projectId, spaceId, id));
    },

    async get(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      wait?: { for: FrameStatus; timeoutSeconds: number },
    ) {
      const deadline = Date.now() + (wait?.timeoutSeconds ?? 0) * 1000;
      // Listening starts before the first read, so a change in between still wakes us.
      const listening =
        wait && notifier ? notifier.listen('frameplane_frame_events', frameId) : undefined;
      try {
        for (;;) {
          const row = await forCaller(actor.userId, projectId, spaceId, frameId);
          if (!row) {
            // Only now tell a missing project (or one out of reach) from a missing frame.
            await access.requireProject(actor.userId, projectId, 'project.read');
            throw notFound('frame');
          }
          decideProject(row.role, 'project.read');
          const f = view(row);
          const left = deadline - Date.now();
          if (!listening || f.status === wait!.for || left <= 0) return f;
          await listening.next(left);
        }
      } finally {
        listening?.close();
      }
    },

    async list(
      actor: Actor,
      projectId: string,
      spaceId: string | undefined,
      limit: number,
      cursor?: string,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      if (spaceId) await requireSpace(projectId, spaceId);
      let q = framesWithFacts(db).where('f.project_id', '=', projectId);
      if (spaceId) q = q.where('f.space_id', '=', spaceId);
      return pageById(q, limit, cursor, view, 'f.id');
    },

    async update(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      input: FrameUpdate,
      ifMatch?: string,
    ) {
      await access.requireProject(actor.userId, projectId, 'frame.edit');
      checkHealthCheckPath(input.health_check_path);
      const now = clock.now();
      return transaction(db, async (trx) => {
        await load(projectId, spaceId, frameId, trx);
        const before = (await lockFrame(trx, frameId))!;
        if (
          ifMatch &&
          ifMatch !== '*' &&
          !ifMatch
            .split(',')
            .map((s) => s.trim().replace(/^W\//, ''))
            .includes(etagOf(before))
        ) {
          throw new AppError(
            412,
            'precondition_failed',
            'Precondition failed',
            'The frame changed since you read it; read it again and retry.',
          );
        }
        const portChanged = input.port !== undefined && input.port !== before.port;
        const scaled =
          input.replica_count !== undefined && input.replica_count !== before.replica_count;
        const reroll = portChanged && before.desired_state === 'running';
        // The agent probes the new path from its next sync; replicas need not restart for it.
        const probed =
          input.health_check_path !== undefined &&
          input.health_check_path !== before.health_check_path;
        const { git_repository_name, ...rest } = input;
        await trx
          .updateTable('frames')
          .set({
            ...rest,
            ...(git_repository_name !== undefined ? { git_repository: git_repository_name } : {}),
            version: sql`version + 1`,
            updated_at: now,
            // Scaling, a new health check path, and a port change on a stopped frame only need the agent to learn them.
            ...((scaled || portChanged || probed) && !reroll
              ? { generation: sql`generation + 1` }
              : {}),
          })
          .where('id', '=', frameId)
          .execute();
        // A port change on a running frame re-rolls it so the new port takes effect (spec 3).
        if (reroll)
          await startDeployment(trx, sealer, before, {
            trigger: 'reroll',
            at: now,
            actorId: actor.userId,
            keep: deploymentHistory,
          });
        else if (scaled) await completeIfHealthy(trx, frameId, now); // scaling down may finish a rollout
        const changed = Object.fromEntries(
          Object.entries(input).filter(
            ([k, v]) =>
              (before as Record<string, unknown>)[
                k === 'git_repository_name' ? 'git_repository' : k
              ] !== v,
          ),
        );
        await recordFrameEvent(trx, frameId, now, {
          type: 'updated',
          actorId: actor.userId,
          detail: changed,
        });
        const was = {
          name: before.name,
          port: before.port,
          replica_count: before.replica_count,
          health_check_path: before.health_check_path,
          git_repository: before.git_repository,
          git_repository_owner: before.git_repository_owner,
          git_repository_branch: before.git_repository_branch,
        };
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'frame.updated',
          targetType: 'frame',
          targetId: frameId,
          before: was,
          after: input,
        });
        await refreshStatus(trx, [frameId], now);
        await notifyAgents(trx, [before.agent_id]);
        return view(await load(projectId, spaceId, frameId, trx));
      });
    },

    /** Deletes the frame and, in the same transaction, releases its domains and volumes. */
    async remove(actor: Actor, projectId: string, spaceId: string, frameId: string) {
      await access.requireProject(actor.userId, projectId, 'frame.manage');
      return transaction(db, async (trx) => {
        await load(projectId, spaceId, frameId, trx);
        const frame = (await lockFrame(trx, frameId))!;
        const domains = await trx
          .selectFrom('domains')
          .select(['id', 'hostname'])
          .where('frame_id', '=', frameId)
          .orderBy('id')
          .execute();
        const volumes = await trx
          .selectFrom('volumes')
          .select(['id', 'name', 'mount_path', 'size_gb'])
          .where('frame_id', '=', frameId)
          .orderBy('id')
          .execute();
        await trx.deleteFrom('frames').where('id', '=', frameId).execute();
        await recordAudit(trx, actor, clock.now(), {
          projectId,
          action: 'frame.deleted',
          targetType: 'frame',
          targetId: frameId,
          before: { name: frame.name },
          after: { released: { domains, volumes } },
        });
        await notifyAgents(trx, [frame.agent_id]);
        await sql`select pg_notify('frameplane_frame_events', ${frameId})`.execute(trx); // ends live streams
        return { id: frameId, deleted: true as const, released: { domains, volumes } };
      });
    },
  };
}

export type FramesService = ReturnType<typeof createFramesService>;
