// Persistent volumes of a frame (CONTRACT 5). They are part of what the agent runs (the sync
// answer lists them), so each change bumps the frame's generation and wakes its agent in the
// same transaction. Names and mount paths are unique per frame (volumes_frame_name_key,
// volumes_frame_mount_key; pg-errors.ts maps both to 409). Replicas of the process and docker
// runtimes keep the mounts they started with; ?deploy=true makes the change a config release,
// so that what runs takes the new set at once on every runtime (Render redeploys on a disk
// change).
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { FrameScope } from '../frames/frame-scope.ts';
import type { AccessService } from '../access/access-service.ts';
import { fieldError, notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { notifyAgents, recordPartChange, refreshStatus } from '../frames/frame-events.ts';
import { bumpGeneration } from '../frames/frames-dal.ts';
import * as dal from './volumes-dal.ts';
import type { FramesService } from '../frames/frames-service.ts';
import { pageById } from '../db/paging.ts';
import type { Sealer } from '../secrets.ts';
import { startConfigRelease } from '../deployments/releases.ts';

/** System directories a volume must not hide or write into. */
export const RESERVED_MOUNTS = [
  '/proc',
  '/sys',
  '/dev',
  '/etc',
  '/bin',
  '/usr',
  '/lib',
  '/sbin',
  '/boot',
  '/run',
  '/var/run',
];
const SEGMENT = /^[A-Za-z0-9._@+=-]+$/;

// What mountPathProblem accepts, as the request schema's pattern (with maxLength 255; checked in
// test/http/openapi-conformance.test.ts).
const NOT_RESERVED = `(?!(?:${RESERVED_MOUNTS.join('|')})(?:/|$))`;
const SEGMENTS = '(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9._@+=-]+)+';
export const MOUNT_PATH_PATTERN = `^${NOT_RESERVED}${SEGMENTS}$`;
export const MOUNT_PATH_MESSAGE =
  'must be an absolute, normalized path (like /data): segments of letters, digits and ' +
  '. _ - @ + = joined by single "/", no "." or ".." segment, no "/" at the end, not "/", and ' +
  `not ${RESERVED_MOUNTS.join(', ')} or under them (system directories); at most 255 characters`;

/** Why a mount path is refused, or undefined when it is a usable one. It is never rewritten. */
export function mountPathProblem(p: string): string | undefined {
  if (!p.startsWith('/')) return 'must be an absolute path (starting with "/")';
  if (p === '/') return 'must not be "/"';
  if (p.length > 255) return 'must be at most 255 characters';
  if (p.includes('//')) return 'must not contain "//"';
  if (p.endsWith('/')) return `must not end with "/" (use "${p.replace(/\/+$/, '')}")`;
  const segments = p.slice(1).split('/');
  if (segments.some((s) => s === '.' || s === '..'))
    return 'must be normalized: no "." or ".." segments';
  if (!segments.every((s) => SEGMENT.test(s)))
    return 'may hold only letters, digits and . _ - @ + = in each segment';
  const reserved = RESERVED_MOUNTS.find((r) => p === r || p.startsWith(`${r}/`));
  if (reserved) return `must not be ${reserved} or under it (a system directory)`;
  return undefined;
}

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  frames: Pick<FramesService, 'load' | 'loadLocked'>;
  sealer: Sealer;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  deploymentHistory: number;
}

interface VolumeRow {
  id: string;
  frame_id: string;
  name: string;
  mount_path: string;
  size_gb: number;
  created_at: Date;
}
const present = (v: VolumeRow) => ({
  id: v.id,
  frame_id: v.frame_id,
  name: v.name,
  mount_path: v.mount_path,
  size_gb: v.size_gb,
  created_at: iso(v.created_at),
});

export interface VolumeInput {
  name: string;
  mount_path: string;
  size_gb: number;
}

type LockedFrame = Awaited<ReturnType<FramesService['loadLocked']>>;

export function createVolumesService(deps: Deps) {
  const { db, clock, access, frames } = deps;
  /**
   * The agent must learn the new set: a new generation, told on commit; with `deploy`, also a
   * config release (a refusal, such as billing's 402, rolls the change back with it).
   */
  async function rollOut(
    trx: Queryable,
    frame: LockedFrame,
    o: { actor: Actor; now: Date; deploy: boolean },
  ) {
    const { actor, now } = o;
    await bumpGeneration(trx, frame.id, now);
    await refreshStatus(trx, [frame.id], now);
    await notifyAgents(trx, [frame.agent_id]);
    if (!o.deploy) return undefined;
    return startConfigRelease(trx, deps.sealer, frame, {
      actor,
      at: now,
      keep: deps.deploymentHistory,
      billing: frame.billing_status,
    });
  }

  return {
    async list(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      limit: number,
      cursor?: string,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      await frames.load(projectId, spaceId, frameId);
      return pageById(dal.volumesOfFrame(db, frameId), limit, cursor, present);
    },

    async add(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      input: VolumeInput,
      deploy = false,
    ) {
      await access.requireProject(actor.userId, projectId, 'volume.manage');
      const problem = mountPathProblem(input.mount_path);
      if (problem) throw fieldError('mount_path', 'invalid_mount_path', `mount_path ${problem}.`);
      const now = clock.now();
      return transaction(db, async (trx) => {
        const frame = await frames.loadLocked(trx, projectId, spaceId, frameId);
        const v = await dal.insertVolume(trx, {
          id: newId('volume', now),
          frame_id: frameId,
          ...input,
          created_at: now,
        });
        await recordPartChange(trx, actor, now, {
          projectId,
          frameId,
          part: 'volume',
          id: v.id,
          change: 'added',
          detail: { volume_id: v.id, ...input },
          state: { frame_id: frameId, ...input },
        });
        const deployment = await rollOut(trx, frame, { actor, now, deploy });
        return { ...present(v), ...(deployment ? { deployment } : {}) };
      });
    },

    /** Removes the volume; with `deploy`, answers the config release that runs without it. */
    async remove(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      volumeId: string,
      deploy = false,
    ) {
      await access.requireProject(actor.userId, projectId, 'volume.manage');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const frame = await frames.loadLocked(trx, projectId, spaceId, frameId);
        const v = await dal.deleteVolumeOfFrame(trx, frameId, volumeId);
        if (!v) throw notFound('volume');
        const { name, mount_path, size_gb } = v;
        const detail = { volume_id: v.id, name, mount_path, size_gb };
        await recordPartChange(trx, actor, now, {
          projectId,
          frameId,
          part: 'volume',
          id: v.id,
          change: 'removed',
          detail,
          state: { frame_id: frameId, ...detail },
        });
        return rollOut(trx, frame, { actor, now, deploy });
      });
    },
  };
}

export type VolumesService = ReturnType<typeof createVolumesService>;
