// Issue 12, item 13: every way a person stops `npm start` drains and exits 0, and leaves no
// process behind. The service runs as people run it: `npm start` in a process group of its own
// (as a terminal's foreground job), the embedded PostgreSQL and the built-in agent included.
// (a) Ctrl-C: SIGINT to the whole group; (b) `kill` of the npm process; (c) `kill` of the node
// process; (d) SIGKILL of the node process: its children must not live on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let parent: string;
let dataDir: string;
const started: ChildProcess[] = [];

beforeAll(() => {
  // As root the server runs as `postgres`, which must pass through DATA_DIR's parents.
  parent = mkdtempSync(join(tmpdir(), 'frameplane-stop-'));
  chmodSync(parent, 0o711);
  dataDir = join(parent, 'data'); // one for every start: later starts find the cluster made
});
afterAll(() => {
  for (const c of started)
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  rmSync(parent, { recursive: true, force: true });
});

/** Every process below `pid` (by /proc parent links), with its command line. */
function descendants(pid: number): Map<number, string> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const found = new Map<number, string>();
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      try {
        found.set(c, readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').join(' ').trim());
      } catch {
        continue;
      }
      walk(c);
    }
  };
  walk(pid);
  return found;
}

/** A process that still runs (a zombie waiting for its parent has ended already). */
function alive(pid: number) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function npmStart() {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    // The built-in cloud's edge, on a port of its own: other tests start services beside this.
    EDGE_HTTP_PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  };
  for (const k of ['DATABASE_URL', 'CLOUD_AGENT', 'SMTP_URL', 'PUBLIC_URL']) delete env[k];
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(npm);
  let log = '';
  npm.stdout!.on('data', (d) => {
    log += d;
  });
  npm.stderr!.on('data', (d) => {
    log += d;
  });
  const exited = new Promise<[number | null, string | null]>((r) =>
    npm.once('exit', (code, signal) => r([code, signal])),
  );
  // Ready, and the agent's own start done (it has its signal handlers by then).
  await waitFor(
    'npm start to be ready, its agent started',
    async () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited (${npm.exitCode}):\n${log}`);
      return {
        readyz: await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status,
          () => 'no answer',
        ),
        agentStarted: log.includes('"msg":"agent started"'),
      };
    },
    {
      until: (s) => s.readyz === 200 && s.agentStarted,
      timeoutMs: 60_000,
      everyMs: 100,
      context: () => log,
    },
  );
  const tree = descendants(npm.pid!);
  const node = [...tree].find(([, cmd]) => cmd.includes('scripts/start.mjs'))?.[0];
  expect(
    [...tree.values()].some((cmd) => /\/postgres -D /.test(cmd)),
    [...tree.values()].join('\n'),
  ).toBe(true);
  expect(
    [...tree.values()].some((cmd) => cmd.includes('frameplane.mjs agent')),
    [...tree.values()].join('\n'),
  ).toBe(true);
  return { npm, node: node!, tree, exited, log: () => log };
}

type Started = Awaited<ReturnType<typeof npmStart>>;

async function expectGone(s: Started) {
  // Only ever fewer: a pid freed meanwhile may be another process's by the next look.
  let left = [...s.tree.keys()];
  const gone = await waitFor(
    'every process of the tree to be gone',
    () => {
      left = left.filter(alive);
      return left.map((p) => s.tree.get(p));
    },
    { until: (l) => l.length === 0, timeoutMs: 10_000, everyMs: 100 },
  );
  expect(gone).toEqual([]);
}

async function expectDrained(s: Started) {
  const [code, signal] = await Promise.race([
    s.exited,
    new Promise<[string, null]>((r) => setTimeout(() => r(['no exit in 30 s', null]), 30_000)),
  ]);
  const log = s.log();
  expect({ code, signal }, log).toEqual({ code: 0, signal: null });
  expect(log).toContain('shutting down: draining requests and jobs');
  // Nothing at error level, and no session cut by a server stopping under us.
  const errors = log
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l) || /57P01|terminating connection/.test(l));
  expect(errors).toEqual([]);
  await expectGone(s);
}

describe('stopping npm start (issue 12, item 13)', () => {
  it('(a) Ctrl-C, SIGINT to the process group: drains, exits 0, nothing left', async () => {
    const s = await npmStart();
    process.kill(-s.npm.pid!, 'SIGINT');
    await expectDrained(s);
  }, 120_000);

  it('(b) SIGTERM to the npm process only: drains, exits 0, nothing left', async () => {
    const s = await npmStart();
    process.kill(s.npm.pid!, 'SIGTERM');
    await expectDrained(s);
  }, 120_000);

  it('(c) SIGTERM to the node process: drains, exits 0, nothing left', async () => {
    const s = await npmStart();
    process.kill(s.node, 'SIGTERM');
    await expectDrained(s);
  }, 120_000);

  it('(d) SIGKILL to the node process: the embedded PostgreSQL and the agent do not live on', async () => {
    const s = await npmStart();
    process.kill(s.node, 'SIGKILL');
    await s.exited;
    await expectGone(s);
    // The cluster was shut down cleanly by its watchdog: the next start needs no clean-up.
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
