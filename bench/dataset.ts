// Draws the bench dataset in memory: who is in which team, which project is shared with which
// team, which frame runs where. seed.ts writes it; fixtures.ts picks the callers from it.
//
// The shape, at scale 1: 100k users, 20k teams, 200k memberships, 50k projects, 100k grants,
// 50k frames. Team sizes and grants per project follow Zipf laws (a few huge, a long tail);
// memberships per user follow a power law (most users in one to three teams).
import type { Role } from '../src/db/schema.ts';
import { newId } from '../src/ids.ts';
import { newSecret } from '../src/secrets.ts';
import { mintToken } from '../src/identity/token-format.ts';
import { benchSealer } from './service.ts';
import {
  powerLaw,
  randomInt,
  seededRandom,
  shuffle,
  weighted,
  zipfSizes,
  type Random,
} from './shape.ts';
import { at } from '../test/helpers/checked.ts';
import { drawOrgs, type Org, type OrgProject } from './orgs.ts';

export const FRAMES_PER_AGENT = 500;

export interface Sizes {
  users: number;
  teams: number;
  memberships: number;
  projects: number;
  grants: number;
  frames: number;
}

export function sizesFor(scale: number): Sizes {
  const n = (full: number) => Math.round(full * scale);
  return {
    users: n(100_000),
    teams: n(20_000),
    memberships: n(200_000),
    projects: n(50_000),
    grants: n(100_000),
    frames: n(50_000),
  };
}

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  /** Signed with the bench's key, as the service signs the tokens it issues. */
  token: string;
  tokenId: string;
  tokenExpiresAt: Date;
}
export interface Member {
  user: number;
  role: Role;
  joinedAt: Date;
}
/** members[0] is the owner: teams.owner_id and the one row with role owner. */
export interface Team {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  members: Member[];
}
export interface Project {
  id: string;
  spaceId: string;
  owner: number;
  name: string;
  createdAt: Date;
  grants: number[];
}
export interface Grant {
  id: string;
  team: number;
  project: number;
  role: Exclude<Role, 'owner'>;
  createdAt: Date;
}
export interface Agent {
  id: string;
  name: string;
  token: string;
  createdAt: Date;
}
export interface Frame {
  id: string;
  deploymentId: string;
  project: number;
  agent: number;
  name: string;
  port: number;
  createdAt: Date;
}

export interface Dataset {
  sizes: Sizes;
  users: User[];
  teams: Team[];
  projects: Project[];
  grants: Grant[];
  agents: Agent[];
  frames: Frame[];
  /** Organizations and the projects they own (bench/orgs.ts), apart from teams and projects. */
  orgs: Org[];
  orgProjects: OrgProject[];
}

const DAY = 86_400_000;

// Every id carries one timestamp: ulidx draws fresh randomness whenever the millisecond moves
// (about 60 µs an id), but increments within one (about 1 µs). Ids stay in creation order.
const STAMP = new Date();
const id = (kind: Parameters<typeof newId>[0]) => newId(kind, STAMP);

/** A time between `from` and now, at fraction `x` of the way. */
const between = (from: Date, now: number, x: number) =>
  new Date(from.getTime() + (now - from.getTime()) * x);

export function drawDataset(scale: number, seed = 20261122): Dataset {
  const sizes = sizesFor(scale);
  const random = seededRandom(seed);
  const now = Date.now() - DAY;
  const start = now - 2 * 365 * DAY;
  // Ascending creation times per table, so ids (ULIDs) sort like creation, as in production.
  const dateAt = (i: number, n: number) => new Date(start + ((now - start) * i) / n);

  // A session's lifetime (identity-service.ts), from the bench's start.
  const tokenExpiresAt = new Date(Date.now() + 30 * DAY);
  const { tokenMac } = benchSealer();
  const users: User[] = Array.from({ length: sizes.users }, (_, i) => {
    const user = id('user');
    const tokenId = id('token');
    const claims = { tokenId, userId: user, expiresAt: tokenExpiresAt };
    return {
      id: user,
      email: `user${i}@bench.example`,
      name: `User ${i}`,
      createdAt: dateAt(i, sizes.users),
      token: mintToken(tokenMac, claims) ?? newSecret('fp'),
      tokenId,
      tokenExpiresAt,
    };
  });
  const teams = drawTeams(random, sizes, users, now, dateAt);
  const projects: Project[] = Array.from({ length: sizes.projects }, (_, i) => ({
    id: id('project'),
    spaceId: id('space'),
    owner: randomInt(random, sizes.users),
    name: `Project ${i}`,
    createdAt: dateAt(i, sizes.projects),
    grants: [],
  }));
  const grants = drawGrants(random, sizes, projects, now);
  const { agents, frames } = drawFrames(random, sizes, projects, now);
  // Drawn last, from a generator of their own: the rest of the dataset is as it was before.
  const { orgs, orgProjects } = drawOrgs(seededRandom(seed + 1), scale, users.length, STAMP);
  return { sizes, users, teams, projects, grants, agents, frames, orgs, orgProjects };
}

function drawTeams(
  random: Random,
  sizes: Sizes,
  users: User[],
  now: number,
  dateAt: (i: number, n: number) => Date,
): Team[] {
  // A few very large teams (the largest about a tenth of all users), most with a handful.
  const teamSizes = shuffle(
    random,
    zipfSizes(sizes.teams, sizes.memberships, 0.9, 1, Math.ceil(sizes.users / 8)),
  );
  // Each user gets a number of seats; the seats, shuffled, fill the teams. A few more seats than
  // memberships, so that a seat refused as a duplicate can be given to another team.
  const seatsOf = powerLaw(random, 2.3, 50);
  const seats: number[] = [];
  for (let u = 0; u < users.length; u++) for (let k = seatsOf(); k > 0; k--) seats.push(u);
  while (seats.length < sizes.memberships * 1.03) seats.push(randomInt(random, users.length));
  shuffle(random, seats);

  const teams: Team[] = teamSizes.map((_, i) => ({
    id: id('team'),
    name: `Team ${i}`,
    slug: `team-${i}`,
    createdAt: dateAt(i, sizes.teams),
    members: [],
  }));
  const deferred: number[] = [];
  let next = 0;
  // Largest first: they are the most likely to draw a seat of a user already in them.
  const order = teamSizes
    .map((size, t) => [size, t] as const)
    .sort((a, b) => b[0] - a[0])
    .map(([, t]) => t);
  for (const t of order) {
    const team = at(teams, t);
    const size = at(teamSizes, t);
    const taken = new Set<number>();
    const take = (u: number) => {
      const joinedAt = taken.size === 0 ? team.createdAt : between(team.createdAt, now, random());
      const role: Role =
        taken.size === 0
          ? 'owner'
          : weighted(random, [
              ['viewer', 35],
              ['member', 55],
              ['admin', 10],
            ]);
      taken.add(u);
      team.members.push({ user: u, role, joinedAt });
    };
    for (let i = 0; i < deferred.length && taken.size < size; ) {
      if (taken.has(at(deferred, i))) i++;
      else {
        take(at(deferred, i));
        deferred[i] = at(deferred, -1);
        deferred.pop();
      }
    }
    while (taken.size < size) {
      if (next >= seats.length) throw new Error('ran out of seats while drawing memberships');
      const u = at(seats, next++);
      if (taken.has(u)) deferred.push(u);
      else take(u);
    }
  }
  return teams;
}

function drawGrants(random: Random, sizes: Sizes, projects: Project[], now: number): Grant[] {
  // Zipf with alpha 0.75: at scale 1 five projects are shared with 500+ teams, most
  // projects with none to two.
  const counts = shuffle(random, zipfSizes(sizes.projects, sizes.grants, 0.75, 0, sizes.teams));
  const grants: Grant[] = [];
  counts.forEach((count, p) => {
    const project = at(projects, p);
    const teams = new Set<number>();
    while (teams.size < count) teams.add(randomInt(random, sizes.teams));
    for (const team of teams) {
      const createdAt = between(project.createdAt, now, random());
      project.grants.push(grants.length);
      grants.push({
        id: id('grant'),
        team,
        project: p,
        createdAt,
        role: weighted(random, [
          ['viewer', 40],
          ['member', 40],
          ['admin', 20],
        ]),
      });
    }
  });
  return grants;
}

function drawFrames(random: Random, sizes: Sizes, projects: Project[], now: number) {
  const perProject = shuffle(random, zipfSizes(sizes.projects, sizes.frames, 0.6, 0, sizes.frames));
  const frames: Frame[] = [];
  perProject.forEach((count, p) => {
    for (let k = 0; k < count; k++) {
      const createdAt = between(at(projects, p).createdAt, now, random());
      frames.push({
        id: id('frame'),
        deploymentId: id('deployment'),
        project: p,
        agent: 0,
        name: `frame-${frames.length}`,
        port: 3000 + (frames.length % 1000),
        createdAt,
      });
    }
  });
  // Cloud agents carry FRAMES_PER_AGENT frames each, drawn at random; agent 0 is the one whose
  // sync is measured, with exactly that many.
  shuffle(random, frames).forEach((f, i) => {
    f.agent = Math.floor(i / FRAMES_PER_AGENT);
  });
  const agents: Agent[] = Array.from(
    { length: Math.ceil(frames.length / FRAMES_PER_AGENT) },
    (_, a) => ({
      id: id('agent'),
      name: `cloud-${a}`,
      token: newSecret('fpa'),
      createdAt: new Date(now),
    }),
  );
  return { agents, frames };
}
