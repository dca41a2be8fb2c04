// From a deployment to an image on the Docker Engine: the repository's own Dockerfile when it
// has one, else a generated one (build/dockerfile.ts). Images are tagged by commit,
// frameplane/<frame>:<sha>, and reused while the recipe is the same: a stop and start, an env
// change or a re-roll of the same commit builds nothing. Docker's layer cache makes a rebuild of
// the same commit for another frame fast too.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { fetchSource } from './fetch.ts';
import { generatedDockerfile, recipeOf } from './dockerfile.ts';
import { planOf } from './plan.ts';
import { BuildError, type BuildRequest, type Release } from '../runtimes/runtime.ts';

export const LABEL = 'frameplane.frame';
const BUILD_TIMEOUT_MS = 20 * 60_000;

export const imageRepo = (frameId: string) =>
  `frameplane/${frameId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;

/** The image of a tag, with its labels, or undefined. */
export async function inspectImage(docker: Docker, ref: string) {
  try {
    return await docker.getImage(ref).inspect();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw err;
  }
}

/**
 * Fetches, then builds (or reuses) the image of a deployment. With a registry (host[:port]),
 * the image is named there and pushed, so that every node of a swarm can pull it.
 */
export async function buildImage(
  docker: Docker,
  baseImage: string,
  r: BuildRequest,
  registry?: string,
): Promise<Release> {
  const release = await buildLocal(docker, baseImage, r, registry ? `${registry}/` : '');
  if (registry) await pushImage(docker, release.artifact, r);
  return release;
}

async function buildLocal(
  docker: Docker,
  baseImage: string,
  r: BuildRequest,
  prefix: string,
): Promise<Release> {
  const work = mkdtempSync(join(tmpdir(), 'frameplane-build-'));
  try {
    const checkout = join(work, 'src');
    const sha = await fetchSource({
      source: r.source,
      into: checkout,
      cwd: work,
      onLine: r.onLine,
      signal: r.signal,
    });
    r.onFetched(sha);
    const own = existsSync(join(checkout, 'Dockerfile'));
    let recipe: string;
    if (own) {
      recipe = recipeOf(`own Dockerfile ${sha}`);
    } else {
      const plan = planOf(checkout);
      if (plan instanceof Error) throw new BuildError('build_failed', plan.message);
      const text = generatedDockerfile(plan, baseImage);
      writeFileSync(join(checkout, 'Dockerfile'), text);
      recipe = recipeOf(text);
    }
    const tag = `${prefix}${imageRepo(r.frameId)}:${sha}`;
    const existing = await inspectImage(docker, tag);
    if (existing?.Config?.Labels?.['frameplane.recipe'] === recipe) {
      r.onLine(`[frameplane] image ${tag} already built; reusing it`);
      return { deploymentId: r.deploymentId, artifact: tag, commitSha: sha };
    }
    r.onLine(
      `[frameplane] building ${tag} from ${own ? "the repository's Dockerfile" : `a generated Dockerfile on ${baseImage}`}`,
    );
    await dockerBuild(
      docker,
      checkout,
      tag,
      { [LABEL]: r.frameId, 'frameplane.recipe': recipe, 'frameplane.commit': sha },
      r,
    );
    return { deploymentId: r.deploymentId, artifact: tag, commitSha: sha };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function dockerBuild(
  docker: Docker,
  dir: string,
  tag: string,
  labels: Record<string, string>,
  r: BuildRequest,
) {
  // The context as a tar stream, without the repository's history.
  const tar = spawn('tar', ['-C', dir, '--exclude=./.git', '-c', '.'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const signal = AbortSignal.any([r.signal, AbortSignal.timeout(BUILD_TIMEOUT_MS)]);
  let stream: NodeJS.ReadableStream;
  try {
    if (!tar.stdout) throw new Error('tar has no output pipe');
    stream = await docker.buildImage(tar.stdout, {
      t: tag,
      labels,
      rm: true,
      forcerm: true,
      abortSignal: signal,
    } as Docker.ImageBuildOptions);
  } catch (err) {
    throw new BuildError(
      'build_failed',
      `the Docker Engine refused the build: ${(err as Error).message}`,
    );
  }
  const tail: string[] = [];
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, out: Array<{ error?: string }>) => {
        const failed = err?.message ?? out.find((o) => o.error)?.error;
        if (failed)
          reject(
            new BuildError(
              'build_failed',
              `${failed.trim()}${tail.length ? `: ${tail.join(' | ')}` : ''}`,
            ),
          );
        else resolve();
      },
      (event: { stream?: string; status?: string; error?: string }) => {
        for (const line of (event.stream ?? event.status ?? '').split('\n')) {
          if (!line.trim()) continue;
          r.onLine(line);
          tail.push(line);
          if (tail.length > 5) tail.shift();
        }
      },
    );
  }).catch((err) => {
    if (signal.aborted && !r.signal.aborted)
      throw new BuildError(
        'build_failed',
        `the build took longer than ${BUILD_TIMEOUT_MS / 60_000} minutes`,
      );
    throw err;
  });
}

/** Pushes an image to its registry; a failure is the registry's, not the build's, so it is retried like a fetch. */
async function pushImage(docker: Docker, tag: string, r: BuildRequest) {
  r.onLine(`[frameplane] pushing ${tag}`);
  const failed = await new Promise<string | undefined>((resolve) => {
    // The Engine wants an auth header even for a registry that asks for none.
    docker
      .getImage(tag)
      .push(
        { abortSignal: r.signal, authconfig: {} } as object,
        (err: Error | null, stream?: NodeJS.ReadableStream) => {
          if (err || !stream) return resolve(err?.message ?? 'no answer');
          const done = (e: Error | null, out: Array<{ error?: string }>) =>
            resolve(e?.message ?? out.find((o) => o.error)?.error);
          docker.modem.followProgress(stream, done);
        },
      );
  });
  if (failed) throw new BuildError('image_pull_failed', `could not push ${tag}: ${failed}`);
}

/** Removes this frame's images other than `keep` (an image still used by a container stays). */
export async function pruneImages(docker: Docker, frameId: string, keep: Set<string>) {
  const images = await docker.listImages({
    filters: JSON.stringify({ label: [`${LABEL}=${frameId}`] }),
  });
  for (const img of images) {
    if ((img.RepoTags ?? []).some((t) => keep.has(t))) continue;
    await docker
      .getImage(img.Id)
      .remove({ noprune: false })
      .catch(() => {
        /* in use, or gone */
      });
  }
}
