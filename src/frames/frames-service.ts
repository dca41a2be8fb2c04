// Frames (spec 2 and 4, CONTRACT 5): create, read, list, update, delete. Operations that change
// what runs (stop, start, deploy) are in frame-ops-service.ts.
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import { decideProject, type AccessService } from '../access/access-service.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import { leastLoadedCloudAgent } from './placement-dal.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { fieldError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { completeIfHealthy, startDeployment } from '../deployments/deployments.ts';
import { startConfigRelease } from '../deployments/releases.ts';
import { reexpire } from '../previews/previews-dal.ts';
import { refusePreviewEnv } from '../env/env-names.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from './frame-events.ts';
import {
  changedFields,
  checkHealthCheckPath,
  checkIfMatch,
  type FrameInput,
  type FrameUpdate,
  previewsOf,
  pushDeploysOf,
  shownUpdate,
  settingsBefore,
  settingsOf,
} from './frame-settings.ts';
import { agentOnline, etagOf, presentFrame } from './frame-view.ts';
import * as dal from './frames-dal.ts';
import { createFrameRows } from './frame-rows.ts';
import { MEMOS_ON, type Memos } from '../memo.ts';
import type { FrameStatus } from './frame-status.ts';
import { removeFrame } from './frame-removal.ts';
import { pageById } from '../db/paging.ts';

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  notifier?: Notifier;
  offlineAfterSeconds: number;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  deploymentHistory: number;
  /** The domain of frames' hostnames (APPS_DOMAIN). */
  appsDomain: string;
  /** ACME is set: frames on an edge with HTTPS have https URLs. */
  tls?: boolean;
  memos?: Memos;
}

export function createFramesService({
  db,
  clock,
  access,
  sealer,
  notifier,
  offlineAfterSeconds,
  deploymentHistory,
  appsDomain,
  tls = false,
  memos = MEMOS_ON,
}: Deps) {
  const rows = createFrameRows(memos);
  const settings = { offlineAfterSeconds, appsDomain, tls };
  const view = (f: dal.FrameWithFacts) => presentFrame(f, clock.now(), settings);

  async function load(
    projectId: string,
    spaceId: string | undefined,
    frameId: string,
    q: Queryable = db,
  ) {
    const f = await dal.frameInProject(q, projectId, spaceId, frameId);
    if (!f) throw notFound('frame');
    return f;
  }

  /** Loads the frame (404 outside this project and space), then locks its row. */
  async function loadLocked(trx: Queryable, projectId: string, spaceId: string, frameId: string) {
    const { billing_status } = await load(projectId, spaceId, frameId, trx);
    const frame = await dal.lockFrame(trx, frameId);
    if (!frame) throw notFound('frame');
    return { ...frame, billing_status };
  }

  async function requireSpace(projectId: string, spaceId: string) {
    if (!(await dal.spaceInProject(db, projectId, spaceId))) throw notFound('space');
  }

  /**
   * The frame with the caller's role on its project, in one query when nothing moved (the
   * role memo's and the frame rows', on the pool).
   */
  function forCaller(
    userId: string,
    projectId: string,
    spaceId: string,
    frameId: string,
    q: Queryable = db,
  ) {
    return access.withRole(q, userId, projectId, (remembered) =>
      rows.read(q, q === db, { projectId, spaceId, frameId, userId }, remembered),
    );
  }

  /** The frame, if the caller may read it (404 or 403 otherwise). */
  async function readable(actor: Actor, projectId: string, spaceId: string, frameId: string) {
    const row = await forCaller(actor.userId, projectId, spaceId, frameId);
    if (!row) {
      // Only now tell a missing project (or one out of reach) from a missing frame.
      await access.requireProject(actor.userId, projectId, 'project.read');
      throw notFound('frame');
    }
    decideProject(row.role, 'project.read');
    return row;
  }

  return {
    load,
    loadLocked,
    view,
    forCaller,
    /** A frame row as a committed stop or start left it (frame-rows.ts). */
    wrote: rows.wrote,
    known: rows.known,
    rememberedFrames: () => rows.size,

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
      if (input.agent_id && !(await dal.agentInProject(db, projectId, input.agent_id)))
        throw fieldError(
          'agent_id',
          'agent_not_found',
          'agent_id must be a self-hosted agent of this project.',
        );
      const now = clock.now();
      const id = await transaction(db, async (trx) => {
        const agentId = input.agent_id ?? (await leastLoadedCloudAgent(trx));
        const frame = await dal.insertFrame(trx, () => newId('frame', now), {
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
        });
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

    /**
     * The frame's answer as the UTF-8 bytes of its JSON (`serialize` is the route's
     * serializer), remembered per version of what it shows (frame-rows.ts answer).
     */
    async answer(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      serialize: (view: unknown) => string,
    ) {
      const row = await readable(actor, projectId, spaceId, frameId);
      const online = agentOnline(row.agent_last_seen_at, clock.now(), offlineAfterSeconds);
      return rows.answer(row, online, () => view(row), serialize);
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
          const f = view(await readable(actor, projectId, spaceId, frameId));
          const left = deadline - Date.now();
          if (!wait || !listening || f.status === wait.for || left <= 0) return f;
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
      return pageById(dal.framesOfProject(db, projectId, spaceId), limit, cursor, view, 'f.id');
    },

    async update(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      input: FrameUpdate,
      ifMatch?: string,
      deploy = false,
    ) {
      await access.requireProject(actor.userId, projectId, 'frame.edit');
      checkHealthCheckPath(input.health_check_path);
      refusePreviewEnv(input.previews?.env);
      const now = clock.now();
      return transaction(db, async (trx) => {
        const before = await loadLocked(trx, projectId, spaceId, frameId);
        checkIfMatch(ifMatch, etagOf(before));
        if (input.previews && before.preview_of)
          throw fieldError(
            'previews',
            'preview_of_preview',
            `This frame is a preview of ${before.preview_of}: set previews on that frame.`,
          );
        const portChanged = input.port !== undefined && input.port !== before.port;
        const scaled =
          input.replica_count !== undefined && input.replica_count !== before.replica_count;
        const reroll = portChanged && before.desired_state === 'running';
        // The agent probes the new path from its next sync; replicas need not restart for it.
        const probed =
          input.health_check_path !== undefined &&
          input.health_check_path !== before.health_check_path;
        // Scaling, a new health check path, and a port change on a stopped frame only need the
        // agent to learn them (a new generation); a re-roll makes its own.
        const learn = (scaled || portChanged || probed) && !reroll;
        const pushDeploys = pushDeploysOf(input, before.push_deploys_paused_at, now);
        await dal.updateFrameSettings(
          trx,
          frameId,
          { ...settingsOf(input), ...pushDeploys, ...previewsOf(input, sealer.seal) },
          now,
          learn,
        );
        // A port change on a running frame re-rolls it so the new port takes effect (spec 3).
        if (reroll)
          await startDeployment(trx, sealer, before, {
            trigger: 'reroll',
            at: now,
            actorId: actor.userId,
            keep: deploymentHistory,
          });
        else if (scaled) await completeIfHealthy(trx, frameId, now); // scaling down may finish a rollout
        const ttl = input.previews?.ttl_days;
        if (ttl !== undefined && ttl !== before.previews_ttl_days)
          await reexpire(trx, frameId, ttl);
        await recordFrameEvent(trx, frameId, now, {
          type: 'updated',
          actorId: actor.userId,
          detail: changedFields(before, input),
        });
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'frame.updated',
          targetType: 'frame',
          targetId: frameId,
          before: settingsBefore(before),
          after: shownUpdate(input),
        });
        // ?deploy=true: the saved settings and env as a release (a re-roll already is one).
        if (deploy && !reroll)
          await startConfigRelease(trx, sealer, before, {
            actor,
            at: now,
            keep: deploymentHistory,
            billing: before.billing_status,
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
        const frame = await loadLocked(trx, projectId, spaceId, frameId);
        const { domains, volumes } = await removeFrame(trx, frame);
        await recordAudit(trx, actor, clock.now(), {
          projectId,
          action: 'frame.deleted',
          targetType: 'frame',
          targetId: frameId,
          before: { name: frame.name },
          after: { released: { domains, volumes } },
        });
        return { id: frameId, deleted: true as const, released: { domains, volumes } };
      });
    },
  };
}

export type FramesService = ReturnType<typeof createFramesService>;
