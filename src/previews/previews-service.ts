// Reading a frame's previews (issue 36): the preview frames it made, oldest first, each read as
// any frame is (its status, its address, what it previews and until when).
import type { Database } from '../db/database.ts';
import type { Actor } from '../actor.ts';
import type { FrameScope } from '../frames/frame-scope.ts';
import type { AccessService } from '../access/access-service.ts';
import { pageById } from '../db/paging.ts';
import { framesOfProject } from '../frames/frames-dal.ts';
import type { FramesService } from '../frames/frames-service.ts';

interface Deps {
  db: Database;
  access: AccessService;
  frames: Pick<FramesService, 'load' | 'view'>;
}

export function createPreviewsService({ db, access, frames }: Deps) {
  return {
    async list(
      actor: Actor,
      { projectId, spaceId, frameId }: FrameScope,
      limit: number,
      cursor?: string,
    ) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      await frames.load(projectId, spaceId, frameId);
      const previews = framesOfProject(db, projectId).where('f.preview_of', '=', frameId);
      return pageById(previews, limit, cursor, frames.view, 'f.id');
    },
  };
}

export type PreviewsService = ReturnType<typeof createPreviewsService>;
