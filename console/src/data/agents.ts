// A project's self-hosted agents, read by the space page (where a frame may run) and by the
// project page's agents section.
import { fp, useList } from '../api.ts';

export const useAgents = (project_id: string, enabled: boolean) =>
  useList(
    ['project', project_id, 'agents'],
    (cursor) =>
      fp().api.GET('/v2/projects/{project_id}/agents', {
        params: { path: { project_id }, query: { cursor } },
      }),
    enabled,
  );
