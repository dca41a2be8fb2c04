// The process runtime's builds: a deployment's source fetched into <frames>/<frame>/<deployment>
// (the checkout, handed to the frame's uid) and its plan's steps run there, confined
// (confine.ts). What the agent knows of a built release, its commit and command, it writes for
// itself beside the checkout, in <deployment>.release.json, never inside it: a tenant's tree may
// hold a link by any name, and a running app may replace any of its files by a FIFO.
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fetchSource } from '../builder/fetch.ts';
import { planOf } from '../builder/plan.ts';
import { run } from '../builder/command.ts';
import { disposeCgroup, type Cgroup } from './cgroups.ts';
import type { Confinement } from './confine.ts';
import { BuildError, type BuildRequest, type Release } from './runtime.ts';

const RECORD = '.release.json';

/** Where the agent keeps what it knows of the release built in `checkout`. */
export const recordOf = (checkout: string) => `${checkout}${RECORD}`;

/** A clean environment for builds and apps: nothing of the agent's, which may hold its token. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LANG: process.env.LANG ?? 'C.UTF-8', TZ: process.env.TZ };
  // The node that runs the agent is the node (and npm) the apps get, even if PATH lacks it.
  env.PATH = [dirname(process.execPath), process.env.PATH || '/usr/local/bin:/usr/bin:/bin'].join(
    ':',
  );
  return {
    ...env,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** The release recorded for a checkout, if both are still there. */
export function recordedRelease(deploymentId: string, checkout: string): Release | undefined {
  try {
    if (!lstatSync(checkout).isDirectory()) return undefined;
    const r = JSON.parse(readFileSync(recordOf(checkout), 'utf8')) as Partial<Release>;
    if (typeof r.commitSha !== 'string' || typeof r.command !== 'string') return undefined;
    return { deploymentId, artifact: checkout, command: r.command, commitSha: r.commitSha };
  } catch {
    return undefined;
  }
}

export async function buildRelease(
  r: BuildRequest,
  framesDir: string,
  confine: Confinement,
): Promise<Release> {
  for (const id of [r.frameId, r.deploymentId])
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id))
      throw new BuildError('image_pull_failed', `invalid id "${id}"`);
  const frameDir = join(framesDir, r.frameId);
  const dir = join(frameDir, r.deploymentId);
  const built = recordedRelease(r.deploymentId, dir);
  if (built) {
    r.onFetched(built.commitSha);
    return built;
  }
  // The frame's directory is the agent's: the frame's processes may not add names to it.
  mkdirSync(frameDir, { recursive: true, mode: 0o711 });
  const work = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    const sha = await fetchSource({
      source: r.source,
      into: work,
      cwd: frameDir,
      onLine: r.onLine,
      signal: r.signal,
    });
    r.onFetched(sha);
    const plan = planOf(work);
    if (plan instanceof Error) throw new BuildError('build_failed', plan.message);
    confine.own(work, r.frameId);
    // Each frame's own npm cache: a shared one let one tenant plant a package in another's.
    const cache = join(frameDir, 'npm-cache');
    confine.ownTop(cache, r.frameId);
    const env = { ...baseEnv(), HOME: work, npm_config_cache: cache };
    const groups: Array<Cgroup | undefined> = [];
    try {
      if (plan.build.length) await confine.egressReady();
      for (const [i, step] of plan.build.entries()) {
        r.onLine(`[frameplane] ${step}`);
        await run('sh', ['-c', step], {
          cwd: work,
          env,
          onLine: r.onLine,
          signal: r.signal,
          timeoutMs: 15 * 60_000,
          spawner: (_cmd, _args, so) => {
            const s = confine.spawn({
              frameId: r.frameId,
              cwd: so.cwd,
              command: step,
              env: so.env,
              writable: [work, cache],
              stdio: 'pipe',
              build: true,
              cgroupName: `build-${r.frameId}-${r.deploymentId}-${i}`,
            });
            groups.push(s.cgroup);
            return s.child;
          },
        });
      }
    } catch (err) {
      throw new BuildError('build_failed', (err as Error).message);
    } finally {
      for (const g of groups) disposeCgroup(g);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    writeFileSync(recordOf(dir), JSON.stringify({ commitSha: sha, command: plan.command }), {
      mode: 0o600,
    });
    return { deploymentId: r.deploymentId, artifact: dir, command: plan.command, commitSha: sha };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
