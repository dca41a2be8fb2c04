// What is measured: each endpoint as its callers use it, against the baseline route.
import type { Call, Fixtures } from './fixtures.ts';
import type { Step } from './load.ts';

export interface Scenario {
  key: string;
  name: string;
  /** Reads are held to the targets; writes, and reads that bypass a memo on purpose, are reported. */
  kind: 'baseline' | 'read' | 'write' | 'reported';
  sequences: Step[][];
}

const get = (c: Call): Step[] => [{ method: 'GET', token: c.token, path: c.path }];
const post = (c: Call, body?: string): Step => ({
  method: 'POST',
  token: c.token,
  path: c.path,
  body,
});

export function scenarios(f: Fixtures): Scenario[] {
  return [
    {
      key: 'baseline',
      name: 'baseline: auth + 1 indexed query',
      kind: 'baseline',
      sequences: f.baseline.map(get),
    },
    {
      key: 'project',
      name: 'GET /v2/projects/:id (via a grant)',
      kind: 'read',
      sequences: f.projectRead.map(get),
    },
    // The same read of a project its org gives access to (CONTRACT 3a), beside the grant path.
    {
      key: 'orgproject',
      name: 'GET /v2/projects/:id (via an org)',
      kind: 'read',
      sequences: f.orgProjectRead.map(get),
    },
    { key: 'teams', name: 'GET /v2/teams', kind: 'read', sequences: f.teamList.map(get) },
    {
      key: 'members',
      name: 'GET /v2/teams/:id/members (big team)',
      kind: 'read',
      sequences: f.memberList.map(get),
    },
    // Member pages are memoized per team version (src/teams/member-pages.ts); a page per caller
    // all through the team measures the path behind the memo.
    {
      key: 'memberpages',
      name: 'GET /v2/teams/:id/members?cursor= (1000 pages, unmemoized)',
      kind: 'reported',
      sequences: f.memberPages.map(get),
    },
    { key: 'frame', name: 'GET …/frames/:id', kind: 'read', sequences: f.frameRead.map(get) },
    // Each stop and each start counts as one request; cloud frames never wait for an agent.
    {
      key: 'stopstart',
      name: 'POST …/stop, then …/start',
      kind: 'write',
      sequences: f.stopStart.map(([stop, start]) => [post(stop), post(start)]),
    },
    {
      key: 'sync',
      name: 'POST /v2/agent/sync (500 frames)',
      kind: 'write',
      sequences: [[post(f.sync, '{}')]],
    },
  ];
}
