// Callers the service has not seen: what a read costs when nothing about the caller is
// remembered. Each request of a cold run is made by a caller no earlier request made: for a
// project or frame read a (user, project) pair the role memo has never held (it is keyed by
// that pair); for the team reads, which remember no role, a user no fixture uses and this pool
// has not taken (its token is cached only if another cold run took it among the token cache's
// last 20,000). A pool is drawn lazily; when it runs out it starts over with the callers it
// drew, and the requests they make again are counted as `repeated`: those were warm, and the
// report says how many.
import type { Call, Fixtures } from './fixtures.ts';
import type { Dataset } from './dataset.ts';
import { encodeCursor } from '../src/paging.ts';
import { randomInt, seededRandom, shuffle, type Random } from './shape.ts';
import { at } from '../test/helpers/checked.ts';

/** The member list's default page (src/http/schemas.ts). */
const PAGE = 50;
/** Consecutive draws of pairs already taken after which a pool counts as used up. */
const GIVE_UP = 5_000;

export class ColdPool {
  private buffer: Array<{ call: Call; again: boolean }> = [];
  private readonly source: Iterator<Call>;
  /** Every caller drawn, to start over with once the source has no more. */
  private readonly drawn: Call[] = [];
  private next = -1;
  /** Requests made by a caller taken before (the pool had started over): warm ones. */
  repeated = 0;
  taken = 0;

  constructor(draw: () => Iterable<Call>) {
    this.source = draw()[Symbol.iterator]();
  }

  private pull(): { call: Call; again: boolean } {
    if (this.next < 0) {
      const n = this.source.next();
      if (!n.done) {
        this.drawn.push(n.value);
        return { call: n.value, again: false };
      }
      if (this.drawn.length === 0) throw new Error('a cold pool with no caller');
      this.next = 0;
    }
    const call = at(this.drawn, this.next);
    this.next = (this.next + 1) % this.drawn.length;
    return { call, again: true };
  }

  /** The next `n` callers, not taken yet. */
  peek(n: number): Call[] {
    while (this.buffer.length < n) this.buffer.push(this.pull());
    return this.buffer.slice(0, n).map((b) => b.call);
  }

  /** Marks the first `k` callers of the last peek of `n` taken; past `n`, the run reused its own. */
  take(k: number, n: number) {
    const used = this.buffer.splice(0, Math.min(k, n));
    this.repeated += used.filter((b) => b.again).length + Math.max(0, k - n);
    this.taken += k;
  }
}

const projectOf = (path: string) => /^\/v2\/projects\/([^/?]+)/.exec(path)?.[1];

export interface ColdPools {
  project: ColdPool;
  orgproject: ColdPool;
  frame: ColdPool;
  teams: ColdPool;
  members: ColdPool;
  memberpages: ColdPool;
}

export function coldPools(data: Dataset, fixtures: Fixtures, seed = 13): ColdPools {
  const random: Random = seededRandom(seed);
  const { users, teams, projects, grants, frames, orgs, orgProjects } = data;
  const token = (u: number) => at(users, u).token;
  const pick = <T>(xs: T[]) => at(xs, randomInt(random, xs.length));

  // (token, project) pairs the role memo may hold: every pair a fixture uses, and every pair a
  // cold pool handed out. Shared by the project, org project and frame pools.
  const seen = new Set<string>();
  const key = (t: string, project: string) => `${t}\n${project}`;
  const fixtureCalls = [
    ...fixtures.projectRead,
    ...fixtures.orgProjectRead,
    ...fixtures.frameRead,
    ...fixtures.stopStart.flat(),
  ];
  for (const c of fixtureCalls) {
    const p = projectOf(c.path);
    if (p) seen.add(key(c.token, p));
  }

  /** Draws until `GIVE_UP` draws in a row were pairs already taken. */
  function* unseen(draw: () => { token: string; project: string; path: string } | undefined) {
    for (let misses = 0; misses < GIVE_UP; ) {
      const d = draw();
      if (!d || seen.has(key(d.token, d.project))) {
        misses++;
        continue;
      }
      misses = 0;
      seen.add(key(d.token, d.project));
      yield { token: d.token, path: d.path };
    }
  }

  const viaGrant = (project: number) => {
    const p = at(projects, project);
    if (p.grants.length === 0) return undefined;
    const m = pick(at(teams, at(grants, pick(p.grants)).team).members);
    return m.user === p.owner ? undefined : m.user;
  };

  const project = new ColdPool(() =>
    unseen(() => {
      const g = pick(grants);
      const u = viaGrant(g.project);
      const p = at(projects, g.project);
      return u === undefined
        ? undefined
        : { token: token(u), project: p.id, path: `/v2/projects/${p.id}` };
    }),
  );

  const orgproject = new ColdPool(() =>
    unseen(() => {
      const p = pick(orgProjects);
      const org = at(orgs, p.org);
      const m = pick(org.members);
      if (m.role === 'owner' || (m.role === 'member' && org.baseRole === 'none')) return undefined;
      return { token: token(m.user), project: p.id, path: `/v2/projects/${p.id}` };
    }),
  );

  // As fixtures.ts: frames of shared projects, the sync agent's left alone.
  const shared = frames.filter((f) => at(projects, f.project).grants.length > 0);
  const others = shared.filter((f) => f.agent !== 0);
  const operable = others.length > 0 ? others : shared;
  const frame = new ColdPool(() =>
    unseen(() => {
      const f = pick(operable);
      const u = viaGrant(f.project);
      const p = at(projects, f.project);
      return u === undefined
        ? undefined
        : {
            token: token(u),
            project: p.id,
            path: `/v2/projects/${p.id}/spaces/${p.spaceId}/frames/${f.id}`,
          };
    }),
  );

  // The team reads: each user once per pass, in an order drawn once.
  const teamsOf = new Map<number, number[]>();
  teams.forEach((t, i) => {
    for (const m of t.members) teamsOf.set(m.user, [...(teamsOf.get(m.user) ?? []), i]);
  });
  const fixtureTokens = new Set(
    [
      ...fixtureCalls,
      ...fixtures.ownRoute,
      ...fixtures.teamList,
      ...fixtures.memberList,
      ...fixtures.memberPages,
    ].map((c) => c.token),
  );
  const inTeams = shuffle(
    random,
    [...teamsOf.keys()].filter((u) => !fixtureTokens.has(token(u))),
  );
  const teamsPool = new ColdPool(() =>
    inTeams.map((u) => ({ token: token(u), path: '/v2/teams' })),
  );
  const members = new ColdPool(() =>
    inTeams.map((u) => ({
      token: token(u),
      path: `/v2/teams/${at(teams, pick(teamsOf.get(u) ?? [])).id}/members`,
    })),
  );
  const memberpages = new ColdPool(function* () {
    for (const u of inTeams) {
      const big = (teamsOf.get(u) ?? []).filter((t) => at(teams, t).members.length > PAGE);
      if (big.length === 0) continue;
      const team = at(teams, pick(big));
      const after = pick(team.members);
      const cursor = encodeCursor([after.joinedAt.toISOString(), at(users, after.user).id]);
      yield { token: token(u), path: `/v2/teams/${team.id}/members?cursor=${cursor}` };
    }
  });

  return { project, orgproject, frame, teams: teamsPool, members, memberpages };
}
