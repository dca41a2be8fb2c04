// What the home page gathers across projects, teams and orgs: every frame of every project the
// caller reaches, and the newest audit entries of those the caller administers (the API answers
// each project's and each group's separately; an audit log is an admin's read, so no one else's
// is asked for, and nothing is refused).
import { useQueries } from '@tanstack/react-query';
import { atLeast, fp, type Schemas } from '../api.ts';
import { projectFrames } from './projects.ts';

type Project = Schemas['Project'];
type Group = Pick<Schemas['Team'], 'id' | 'name' | 'role'>;
export type Activity = Schemas['AuditEvent'] & { where: string; link: string };

/** The frames of each project, under the key the project page reads them with. */
export function useAllFrames(projects: Project[]) {
  const reads = useQueries({
    queries: projects.map((p) => projectFrames(p.id)),
  });
  const frames = reads.flatMap((r, i) =>
    (r.data ?? []).map((f) => ({ frame: f, project: projects[i] as Project })),
  );
  return {
    frames,
    pending: reads.some((r) => r.isPending),
    error: reads.find((r) => r.error)?.error,
  };
}

const NEWEST = 5;

/** The newest entries of each audit log the caller may read, newest first, `max` in all. */
export function useActivity(
  projects: Project[],
  groups: { teams: Group[]; orgs: Group[] },
  max = 10,
) {
  const query = { limit: NEWEST };
  const sources = [
    ...projects
      .filter((p) => atLeast(p.role, 'admin'))
      .map((p) => ({
        key: ['project', p.id, 'audit'],
        where: p.name,
        link: `/console/projects/${p.id}`,
        read: () =>
          fp().call(
            fp().api.GET('/v2/projects/{project_id}/audit', {
              params: { path: { project_id: p.id }, query },
            }),
          ),
      })),
    ...groups.teams
      .filter((t) => atLeast(t.role, 'admin'))
      .map((t) => ({
        key: ['team', t.id, 'audit'],
        where: t.name,
        link: `/console/teams/${t.id}`,
        read: () =>
          fp().call(
            fp().api.GET('/v2/teams/{team_id}/audit', {
              params: { path: { team_id: t.id }, query },
            }),
          ),
      })),
    ...groups.orgs
      .filter((o) => atLeast(o.role, 'admin'))
      .map((o) => ({
        key: ['org', o.id, 'audit'],
        where: o.name,
        link: `/console/orgs/${o.id}`,
        read: () =>
          fp().call(
            fp().api.GET('/v2/orgs/{org_id}/audit', {
              params: { path: { org_id: o.id }, query },
            }),
          ),
      })),
  ];
  const reads = useQueries({
    queries: sources.map((s) => ({ queryKey: s.key, queryFn: s.read })),
  });
  const entries: Activity[] = reads.flatMap((r, i) => {
    const s = sources[i];
    return s ? (r.data?.data ?? []).map((e) => ({ ...e, where: s.where, link: s.link })) : [];
  });
  entries.sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));
  return {
    entries: entries.slice(0, max),
    readable: sources.length > 0,
    pending: reads.some((r) => r.isPending),
    error: reads.find((r) => r.error)?.error,
  };
}
