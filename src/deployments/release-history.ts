// A frame's releases as people read them (issue 36): its deployments, newest first, each with
// what it changed against the release before it (release-changes.ts). Env values show only to
// those who may read them; viewers get the names.
import type { Database } from '../db/database.ts';
import type { Actor } from '../actor.ts';
import type { FrameScope } from '../frames/frame-scope.ts';
import type { AccessService } from '../access/access-service.ts';
import { canOnProject } from '../access/roles.ts';
import type { Sealer } from '../secrets.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { presentDeployment } from './deployments.ts';
import { deploymentOf, deploymentsPage, releasesBefore } from './deployments-dal.ts';
import type { FramesService } from '../frames/frames-service.ts';
import { previousRelease, type ReleaseFacts, releaseChanges } from './release-changes.ts';

type Row = Awaited<ReturnType<typeof deploymentsPage>>[number];

interface Deps {
  db: Database;
  access: AccessService;
  sealer: Sealer;
  frames: Pick<FramesService, 'load'>;
}

export function createReleaseHistory({ db, access, sealer, frames }: Deps) {
  /** Each row with its changes; `releases` holds the succeeded deployments before them. */
  function withChanges(rows: Row[], releases: Row[], showValues: boolean) {
    const envs = new Map<string, Record<string, string>>();
    const facts = (r: Row): ReleaseFacts => {
      const env = envs.get(r.id) ?? JSON.parse(sealer.open(r.env_sealed));
      envs.set(r.id, env);
      return { ...r, env };
    };
    const all = [...rows, ...releases];
    return (d: Row) => {
      const before = previousRelease(all, d.id);
      const changes = releaseChanges(before && facts(before), facts(d), showValues);
      return { ...presentDeployment(d), changes: changes ?? null };
    };
  }

  async function readable(actor: Actor, projectId: string, spaceId: string, frameId: string) {
    const { role } = await access.requireProject(actor.userId, projectId, 'project.read');
    await frames.load(projectId, spaceId, frameId);
    return canOnProject(role, 'env.read_values');
  }

  return {
    async list(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      limit: number,
      cursor?: string,
    ) {
      const showValues = await readable(actor, projectId, spaceId, frameId);
      const rows = await deploymentsPage(db, frameId, limit, decodeCursor(cursor, 1)?.[0]);
      const oldest = rows.slice(0, limit).at(-1);
      const releases = oldest ? await releasesBefore(db, frameId, oldest.id) : [];
      return toPage(rows, limit, (d) => [d.id], withChanges(rows, releases, showValues));
    },

    async show(actor: Actor, { projectId, spaceId, frameId }: FrameScope, deploymentId: string) {
      const showValues = await readable(actor, projectId, spaceId, frameId);
      const d = await deploymentOf(db, frameId, deploymentId);
      if (!d) throw notFound('deployment');
      return withChanges([d], await releasesBefore(db, frameId, d.id), showValues)(d);
    },
  };
}

export type ReleaseHistory = ReturnType<typeof createReleaseHistory>;
