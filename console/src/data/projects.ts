// Reads of projects that several pages share: the list, one project, and who has access to it.
// Pages import them from here, never from one another.
import { fp, useList, useRead } from '../api.ts';
import type { Frame } from './frames.ts';

/** The cache key of the project list, refreshed by a write that adds, renames or removes one. */
export const PROJECTS = ['projects'];

export const useProjects = () =>
  useList(PROJECTS, (cursor) => fp().api.GET('/v2/projects', { params: { query: { cursor } } }));

export const useProject = (project_id: string) =>
  useRead(['project', project_id], () =>
    fp().call(fp().api.GET('/v2/projects/{project_id}', { params: { path: { project_id } } })),
  );

export const useAccess = (project_id: string) =>
  useRead(['project', project_id, 'access'], () =>
    fp().call(
      fp().api.GET('/v2/projects/{project_id}/access', { params: { path: { project_id } } }),
    ),
  );

/** Every frame of a project, of all its spaces: the project page and the home page. */
export const projectFrames = (project_id: string) => ({
  queryKey: ['project', project_id, 'frames'],
  queryFn: () =>
    fp().all<Frame>((cursor) =>
      fp().api.GET('/v2/projects/{project_id}/frames', {
        params: { path: { project_id }, query: { cursor } },
      }),
    ),
});

export const useProjectFrames = (project_id: string) => {
  const q = projectFrames(project_id);
  return useRead(q.queryKey, q.queryFn);
};

/** A project's spaces: its page lists them with their frames, and deletes them. */
export const useSpaces = (project_id: string) =>
  useList(['project', project_id, 'spaces'], (cursor) =>
    fp().api.GET('/v2/projects/{project_id}/spaces', {
      params: { path: { project_id }, query: { cursor } },
    }),
  );

/** One space (its name for a heading or a back link). */
export const useSpace = (project_id: string, space_id: string) =>
  useRead(['space', space_id], () =>
    fp().call(
      fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}', {
        params: { path: { project_id, space_id } },
      }),
    ),
  );
