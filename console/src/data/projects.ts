// Reads of projects that several pages share: the list, one project, and who has access to it.
// Pages import them from here, never from one another.
import { fp, useList, useRead } from '../api.ts';

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
