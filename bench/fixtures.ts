// Picks who calls what, from the drawn dataset: many different users per endpoint, so that
// neither the service nor PostgreSQL answers every request from one warm row.
import type { Role } from '../src/db/schema.ts';
import { rank } from '../src/access/roles.ts';
import { FRAMES_PER_AGENT, type Dataset } from './dataset.ts';
import { randomInt, seededRandom, shuffle } from './shape.ts';
import { encodeCursor } from '../src/paging.ts';
import { at } from '../test/helpers/checked.ts';

export const CALLERS = 1_000;

/** One request a caller makes: its bearer token and its path. */
export interface Call {
  token: string;
  path: string;
}

export interface Fixtures {
  /** Our own route (bench/service-process.ts), by random users. */
  ownRoute: Call[];
  projectRead: Call[];
  /** The same read of a project an org owns, by its admins and members (the org path). */
  orgProjectRead: Call[];
  teamList: Call[];
  memberList: Call[];
  /** Pages all through the big team, a different one per caller: past the page memo. */
  memberPages: Call[];
  frameRead: Call[];
  /** Each pair stops, then starts, one frame; pairs never share a frame. */
  stopStart: Array<[Call, Call]>;
  sync: Call;
  /** What was picked, for the report: the big team, the sync agent, how many callers. */
  notes: string[];
}

const least = (a: Role, b: Role): Role => (rank(a) <= rank(b) ? a : b);

export function pickFixtures(data: Dataset, seed = 7): Fixtures {
  const random = seededRandom(seed);
  const { users, teams, projects, grants, frames } = data;
  const token = (u: number) => at(users, u).token;
  const pick = <T>(xs: T[]) => at(xs, randomInt(random, xs.length));

  /** A user who reaches `project` through a team grant (not its owner), with at least `min`. */
  function viaGrant(project: number, min: Role): number | undefined {
    const p = at(projects, project);
    for (let tries = 0; tries < 20 && p.grants.length > 0; tries++) {
      const g = at(grants, pick(p.grants));
      const m = pick(at(teams, g.team).members);
      if (m.user !== p.owner && rank(least(m.role, g.role)) >= rank(min)) return m.user;
    }
    return undefined;
  }

  const ownRoute = Array.from({ length: CALLERS }, () => ({
    token: token(randomInt(random, users.length)),
    path: '/bench/own-route',
  }));

  // The access check: a project reached through a grant. Grants are sampled uniformly, so the
  // projects shared with hundreds of teams come up as often as they hold grants.
  const projectRead: Call[] = [];
  while (projectRead.length < CALLERS) {
    const g = pick(grants);
    const u = viaGrant(g.project, 'viewer');
    if (u !== undefined)
      projectRead.push({ token: token(u), path: `/v2/projects/${at(projects, g.project).id}` });
  }

  // The org path: a project an org owns, read by one of its admins or members whom the
  // org's base_role lets in (the owner is left out, as projectRead leaves the owner out).
  const orgProjectRead: Call[] = [];
  const { orgs, orgProjects } = data;
  for (let tries = 0; orgProjectRead.length < CALLERS && tries < CALLERS * 20; tries++) {
    const p = pick(orgProjects);
    const org = at(orgs, p.org);
    const m = pick(org.members);
    if (m.role === 'owner' || (m.role === 'member' && org.baseRole === 'none')) continue;
    orgProjectRead.push({ token: token(m.user), path: `/v2/projects/${p.id}` });
  }

  const inTeams = new Set(teams.flatMap((t) => t.members.map((m) => m.user)));
  const members = [...inTeams];
  const teamList = Array.from({ length: CALLERS }, () => ({
    token: token(pick(members)),
    path: '/v2/teams',
  }));

  const big = teams.reduce((a, b) => (b.members.length > a.members.length ? b : a));
  const memberList = Array.from({ length: CALLERS }, () => ({
    token: token(pick(big.members).user),
    path: `/v2/teams/${big.id}/members`,
  }));
  // The list's order is (joined_at, user id); a cursor names the row a page starts after.
  const byJoin = [...big.members].sort(
    (x, y) =>
      x.joinedAt.getTime() - y.joinedAt.getTime() ||
      (at(users, x.user).id < at(users, y.user).id ? -1 : 1),
  );
  const memberPages = Array.from({ length: CALLERS }, () => {
    const after = pick(byJoin);
    const cursor = encodeCursor([after.joinedAt.toISOString(), at(users, after.user).id]);
    return {
      token: token(pick(big.members).user),
      path: `/v2/teams/${big.id}/members?cursor=${cursor}`,
    };
  });

  // Frames of shared projects, read and operated by members of a team holding the grant. The
  // sync agent's frames are left alone, when there are others, so that its answer does not
  // change under it.
  const frameUrl = (f: (typeof frames)[number]) =>
    `/v2/projects/${at(projects, f.project).id}/spaces/${at(projects, f.project).spaceId}/frames/${f.id}`;
  const shared = frames.filter((f) => at(projects, f.project).grants.length > 0);
  const others = shared.filter((f) => f.agent !== 0);
  const operable = others.length > 0 ? others : shared;
  if (operable.length === 0) throw new Error('the dataset has no shared project with frames');
  const frameRead: Call[] = [];
  for (let tries = 0; frameRead.length < CALLERS && tries < CALLERS * 20; tries++) {
    const f = pick(operable);
    const u = viaGrant(f.project, 'viewer');
    if (u !== undefined) frameRead.push({ token: token(u), path: frameUrl(f) });
  }
  const stopStart: Array<[Call, Call]> = [];
  for (const f of shuffle(random, [...operable])) {
    if (stopStart.length === CALLERS) break;
    const u = viaGrant(f.project, 'member');
    if (u === undefined) continue;
    stopStart.push([
      { token: token(u), path: `${frameUrl(f)}/stop` },
      { token: token(u), path: `${frameUrl(f)}/start` },
    ]);
  }

  const sync = { token: at(data.agents, 0).token, path: '/v2/agent/sync' };
  const notes = [
    `member list: team ${big.id} with ${big.members.length} members`,
    `agent sync: agent ${at(data.agents, 0).id} with ${FRAMES_PER_AGENT} cloud frames`,
    `org project read: ${orgProjectRead.length} callers over ${orgProjects.length} projects of ${orgs.length} orgs`,
    `callers: ${CALLERS} per endpoint (stop/start: ${stopStart.length} frames, frame read: ${frameRead.length} callers)`,
  ];
  return {
    ownRoute,
    projectRead,
    orgProjectRead,
    teamList,
    memberList,
    memberPages,
    frameRead,
    stopStart,
    sync,
    notes,
  };
}
