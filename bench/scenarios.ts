// What is measured: each endpoint as its callers use it, against the stack's limit.
import type { Call, Fixtures } from './fixtures.ts';
import type { ColdPool, ColdPools } from './cold.ts';
import type { Step } from './load.ts';

export interface Scenario {
  key: string;
  /** What `--only=` names: a read's warm and cold runs share it. */
  only: string;
  name: string;
  /**
   * `limit`: the stack's limit, every row's yardstick. Reads are held to the targets (warm and
   * cold ones to their own); writes to theirs; `reported` rows to nothing.
   */
  kind: 'limit' | 'read' | 'write' | 'reported';
  /** Which process answers. */
  on: 'limit' | 'service';
  /** warm: the same callers (CALLERS of them) over and over; cold: `pool`'s, each taken once. */
  temperature?: 'warm' | 'cold';
  sequences: Step[][];
  pool?: ColdPool;
  /** Connection counts measured on top of the run's (the sync's target is at 1 connection). */
  alsoAt?: number[];
}

const get = (c: Call): Step[] => [{ method: 'GET', token: c.token, path: c.path }];
const post = (c: Call, body?: string): Step => ({
  method: 'POST',
  token: c.token,
  path: c.path,
  body,
});

/** A warm read and its cold twin. */
function read(
  only: string,
  name: string,
  calls: Call[],
  pool: ColdPool,
  coldName = name,
): Scenario[] {
  return [
    {
      key: only,
      only,
      name: `${name}, warm`,
      kind: 'read',
      on: 'service',
      temperature: 'warm',
      sequences: calls.map(get),
    },
    {
      key: `${only}-cold`,
      only,
      name: `${coldName}, cold`,
      kind: 'read',
      on: 'service',
      temperature: 'cold',
      sequences: [],
      pool,
    },
  ];
}

/** `syncState`: the sync agent's `state`, sent back as an agent that holds it does. */
export function scenarios(f: Fixtures, cold: ColdPools, syncState: string): Scenario[] {
  return [
    {
      key: 'limit',
      only: 'limit',
      name: "the stack's limit: Fastify + pg, a project by id",
      kind: 'limit',
      on: 'limit',
      sequences: f.projectRead.map((c) => [{ method: 'GET', path: c.path.replace('/v2', '') }]),
    },
    {
      key: 'own',
      only: 'own',
      name: 'our own route: auth + a user by id (in the service)',
      kind: 'reported',
      on: 'service',
      sequences: f.ownRoute.map(get),
    },
    ...read('project', 'GET /v2/projects/:id (via a grant)', f.projectRead, cold.project),
    // The same read of a project its org gives access to (CONTRACT 3a), beside the grant path.
    ...read('orgproject', 'GET /v2/projects/:id (via an org)', f.orgProjectRead, cold.orgproject),
    ...read('teams', 'GET /v2/teams', f.teamList, cold.teams),
    ...read(
      'members',
      'GET /v2/teams/:id/members (big team)',
      f.memberList,
      cold.members,
      "GET /v2/teams/:id/members (a team of the caller's)",
    ),
    // Member lists are held whole per team version (src/teams/member-rosters.ts): warm,
    // a page after a random member of the big team per caller; cold, a new caller each request
    // and a page of one of its teams.
    ...read(
      'memberpages',
      'GET /v2/teams/:id/members?cursor= (big team, pages past the first)',
      f.memberPages,
      cold.memberpages,
      "GET /v2/teams/:id/members?cursor= (a team of the caller's, past the first page)",
    ),
    ...read('frame', 'GET …/frames/:id', f.frameRead, cold.frame),
    // Each stop and each start counts as one request; cloud frames never wait for an agent.
    {
      key: 'stopstart',
      only: 'stopstart',
      name: 'POST …/stop, then …/start',
      kind: 'write',
      on: 'service',
      sequences: f.stopStart.map(([stop, start]) => [post(stop), post(start)]),
    },
    {
      key: 'sync',
      only: 'sync',
      name: 'POST /v2/agent/sync (500 unchanged frames, known_state)',
      kind: 'write',
      on: 'service',
      sequences: [[post(f.sync, JSON.stringify({ known_state: syncState }))]],
      alsoAt: [1],
    },
    {
      key: 'syncfull',
      only: 'sync',
      name: 'POST /v2/agent/sync (500 frames, the whole state)',
      kind: 'reported',
      on: 'service',
      sequences: [[post(f.sync, '{}')]],
      alsoAt: [1],
    },
  ];
}
