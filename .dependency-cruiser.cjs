// The import graph of src/ and console/src/, checked by `npm run lint:deps` (dependency-cruiser).
// The rules and why each holds are in docs/architecture.md, "The checked import graph".

// Who may import another area's *-dal.ts, and why. An area's DAL is its own: others reach the
// area through its service or through a module of it that is not a DAL. These imports are the
// cases where the write or the lock has to happen in the caller's transaction. A DAL may import
// another area's DAL (SQL may join other areas' tables), so only non-DAL importers are checked.
const DAL_EXCEPTIONS = [
  {
    dal: 'src/audit/audit-dal.ts',
    from: ['^src/'],
    why: 'every change writes its audit row in its own transaction (audit is at the bottom)',
  },
  {
    dal: 'src/frames/frames-dal.ts',
    from: ['^src/(domains|env|volumes|history|previews)/'],
    why:
      "a frame's env, domains, volumes and previews lock the frame row (lockFrame, " +
      "bumpGeneration) in the transaction of their change, and read a space's or project's " +
      'frames; they were one area with frames until issue 37 and hang from its row',
  },
  {
    dal: 'src/frames/placement-dal.ts',
    from: ['^src/previews/previews\\.ts$'],
    why: 'a preview frame is placed on a cloud agent in the transaction that creates it',
  },
  {
    dal: 'src/env/env-dal.ts',
    from: ['^src/deployments/deployments\\.ts$', '^src/previews/previews\\.ts$'],
    why:
      "a deployment freezes the frame's env rows into its snapshot, and a preview writes its " +
      'env, each in the transaction that makes it',
  },
  {
    dal: 'src/history/history-dal.ts',
    from: ['^src/frames/frame-events\\.ts$'],
    why: "a frame's event is recorded in the transaction of the change it tells of",
  },
  {
    dal: 'src/domains/domains-dal.ts',
    from: ['^src/frames/frame-removal\\.ts$'],
    why: 'deleting a frame reports the domains it releases, read in the same transaction',
  },
  {
    dal: 'src/volumes/volumes-dal.ts',
    from: ['^src/frames/frame-removal\\.ts$'],
    why: 'deleting a frame reports the volumes it releases, read in the same transaction',
  },
  {
    dal: 'src/previews/previews-dal.ts',
    from: ['^src/frames/frames-service\\.ts$', '^src/jobs/sweeper\\.ts$'],
    why:
      "changing a frame's preview settings re-expires its previews in the same transaction; " +
      'the sweeper finds the expired ones',
  },
  {
    dal: 'src/deployments/deployments-dal.ts',
    from: ['^src/agent-api/sync-reports\\.ts$'],
    why: "an agent's report applies to the frame's latest deployment, read under its lock",
  },
  {
    dal: 'src/teams/teams-dal.ts',
    from: ['^src/orgs/orgs-service\\.ts$'],
    why: 'an organization is a teams row of kind org (teams/kinds.ts)',
  },
];

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const areaOf = (file) => `^${esc(file.split('/').slice(0, 2).join('/'))}/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type-only imports included: modules in a cycle change together.',
      severity: 'error',
      from: { path: '^(src|console/src)/' },
      to: { circular: true },
    },
    {
      name: 'db-not-runner',
      comment: 'db/ is the service side; the runner is the agent program, bundled on its own.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/runner/' },
    },
    {
      name: 'runner-not-db',
      comment: 'The agent program has no database: it knows the service through its HTTP API.',
      severity: 'error',
      from: { path: '^src/runner/' },
      to: { path: '^src/db/' },
    },
    {
      name: 'runner-apart',
      comment:
        "The runner is bundled into the CLI's package: of the service it takes the sync's wire " +
        'types and item schemas only (docs/architecture.md, The client side).',
      severity: 'error',
      from: { path: '^src/runner/' },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/(runner|db)/', '^src/agent-api/(agents-schemas|sync-items)\\.ts$'],
      },
    },
    {
      name: 'sdk-alone',
      comment: 'The SDK knows the API only through schema.d.ts, so that it can ship alone.',
      severity: 'error',
      from: { path: '^src/sdk/' },
      to: { path: '^src/', pathNot: '^src/sdk/' },
    },
    {
      name: 'console-through-sdk',
      comment: 'The console runs in the browser and knows the service only through the SDK.',
      severity: 'error',
      from: { path: '^console/src/' },
      to: { path: '^src/', pathNot: '^src/sdk/' },
    },
    {
      name: 'service-not-console',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^console/' },
    },
    {
      name: 'console-pages-apart',
      comment:
        'A page imports no page, a component no page: shared reads are in console/src/data/.',
      severity: 'error',
      from: { path: '^console/src/(pages|components)/' },
      to: { path: '^console/src/pages/' },
    },
    {
      name: 'dal-of-another-area',
      comment: "Another area's DAL, from outside any DAL: go through its service instead.",
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: '-dal\\.ts$' },
      to: {
        path: '^src/[^/]+/.+-dal\\.ts$',
        pathNot: ['^src/$1/', ...DAL_EXCEPTIONS.map((e) => `^${esc(e.dal)}$`)],
      },
    },
    // The listed DALs: only their own area, other DALs and the listed importers.
    ...DAL_EXCEPTIONS.map((e) => ({
      name: 'dal-of-another-area',
      comment: `${e.dal}, allowed only where ${e.why}.`,
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: [areaOf(e.dal), '-dal\\.ts$', ...e.from] },
      to: { path: `^${esc(e.dal)}$` },
    })),
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are edges too: a cycle of types still ties two modules together.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
