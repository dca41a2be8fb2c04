// From a deployment to an image on the Docker Engine: the repository's own Dockerfile when it
// has one, else a generated one (dockerfile.ts). Images are tagged by commit,
// frameplane/<frame>:<sha>, and reused while the recipe is the same: a stop and start, an env
// change or a re-roll of the same commit builds nothing. Docker's layer cache makes a rebuild of
// the same commit for another frame fast too.
//
// The checkout is the tenant's and hostile (tenant-files.ts): its Dockerfile is read without
// following a link, checked (dockerfile-policy.ts), and what the Engine builds is a file of ours
// in the build's work directory, outside the checkout, added to the context the Engine receives.
// Builds run on a bridge network of their own where containers cannot reach each other.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { fetchSource } from './fetch.ts';
import { generatedDockerfile, recipeOf } from './dockerfile.ts';
import {
  DockerfileError,
  type ParsedDockerfile,
  parseDockerfile,
  renderDockerfile,
} from './dockerfile-parse.ts';
import { imageUses, refusalsOf } from './dockerfile-policy.ts';
import { lookUpImages } from './image-lookup.ts';
import { FRAME_LABEL, imageRepo } from './image-reference.ts';
import { planOf } from './plan.ts';
import { ensureBridgeNetwork } from '../runtimes/docker-network.ts';
import { BuildError, type BuildRequest, type Release } from '../runtimes/runtime.ts';
import { entryKind, readTenantText, TenantFileError } from '../tenant-files.ts';

export { imageRepo };
export const LABEL = FRAME_LABEL;
/** The network image builds run on (inter-container traffic off), unless told another. */
export const BUILD_NETWORK = 'frameplane-builds';
const BUILD_TIMEOUT_MS = 20 * 60_000;

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
  o: { network?: string } = {},
): Promise<Release> {
  const prefix = registry ? `${registry}/` : '';
  const release = await buildLocal(docker, baseImage, r, prefix, o.network ?? BUILD_NETWORK);
  if (registry) await pushImage(docker, release.artifact, r);
  return release;
}

async function buildLocal(
  docker: Docker,
  baseImage: string,
  r: BuildRequest,
  prefix: string,
  network: string,
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
    const { text, own } = await dockerfileOf(docker, checkout, baseImage, r);
    const recipe = recipeOf(text);
    const tag = `${prefix}${imageRepo(r.frameId)}:${sha}`;
    const existing = await inspectImage(docker, tag);
    if (existing?.Config?.Labels?.['frameplane.recipe'] === recipe) {
      r.onLine(`[frameplane] image ${tag} already built; reusing it`);
      return { deploymentId: r.deploymentId, artifact: tag, commitSha: sha, image: existing.Id };
    }
    const from = own ? "the repository's Dockerfile" : `a generated Dockerfile on ${baseImage}`;
    r.onLine(`[frameplane] building ${tag} from ${from}`);
    // Named by its recipe, not at random: the name is part of the context, and a context that
    // changed on every build would never meet Docker's layer cache.
    const name = `.frameplane-dockerfile-${recipe}`;
    writeFileSync(join(work, name), text, { flag: 'wx' });
    const labels = { [LABEL]: r.frameId, 'frameplane.recipe': recipe, 'frameplane.commit': sha };
    await dockerBuild(docker, { checkout, work, name, network }, tag, labels, r);
    const image = (await inspectImage(docker, tag))?.Id;
    return { deploymentId: r.deploymentId, artifact: tag, commitSha: sha, image };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The Dockerfile to build: the repository's own once checked, else one generated from its plan. */
async function dockerfileOf(docker: Docker, checkout: string, baseImage: string, r: BuildRequest) {
  const kind = entryKind(checkout, 'Dockerfile');
  if (kind === undefined) {
    const plan = planOf(checkout);
    if (plan instanceof Error) throw new BuildError('build_failed', plan.message);
    return { text: generatedDockerfile(plan, baseImage), own: false };
  }
  let source: string | undefined;
  try {
    if (kind !== 'file') throw new TenantFileError(`Dockerfile is ${KINDS[kind]}`);
    source = readTenantText(checkout, 'Dockerfile');
    if (source === undefined) throw new TenantFileError('Dockerfile went away while read');
  } catch (err) {
    if (!(err instanceof TenantFileError)) throw err;
    throw new BuildError(
      'build_failed',
      `${err.message}: Frameplane builds only a Dockerfile that is a regular file at the top ` +
        'of the repository',
    );
  }
  let parsed: ParsedDockerfile;
  try {
    parsed = parseDockerfile(source);
  } catch (err) {
    if (!(err instanceof DockerfileError)) throw err;
    throw new BuildError('build_failed', `the Dockerfile cannot be built here: ${err.message}`);
  }
  const refusals = await refusalsFor(docker, parsed, r);
  if (refusals.length) {
    const lines = refusals.map((f) => `line ${f.line}: ${f.reason}`).join('; ');
    throw new BuildError('build_failed', `the Dockerfile cannot be built here: ${lines}`);
  }
  return { text: renderDockerfile(parsed), own: true };
}

const KINDS = {
  symlink: 'a symbolic link',
  dir: 'a directory',
  other: 'not a regular file',
  file: '',
};

/** Why the Dockerfile may not be built; empty when it may. */
async function refusalsFor(docker: Docker, parsed: ParsedDockerfile, r: BuildRequest) {
  const { uses, refusals } = imageUses(parsed, r.frameId);
  // Refused by name alone: the Engine is not asked about (nor made to pull) anything.
  if (refusals.length) return refusals;
  const refs = uses.map((u) => u.ref);
  const answers = await lookUpImages(docker, refs, r.signal, r.onLine);
  const notAsked = { found: false as const, why: 'not looked up' };
  return refusalsOf(parsed, r.frameId, (ref) => answers.get(ref) ?? notAsked);
}

async function dockerBuild(
  docker: Docker,
  at: { checkout: string; work: string; name: string; network: string },
  tag: string,
  labels: Record<string, string>,
  r: BuildRequest,
) {
  try {
    await ensureBridgeNetwork(docker, at.network);
  } catch (err) {
    throw new BuildError('build_failed', `no build network: ${(err as Error).message}`);
  }
  // The context as a tar stream: the checkout without its history, and our Dockerfile from the
  // work directory. tar archives the tenant's links as links and follows none.
  const tar = spawn(
    'tar',
    ['-c', '--exclude=./.git', '-C', at.checkout, '.', '-C', at.work, at.name],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const signal = AbortSignal.any([r.signal, AbortSignal.timeout(BUILD_TIMEOUT_MS)]);
  let stream: NodeJS.ReadableStream;
  try {
    if (!tar.stdout) throw new Error('tar has no output pipe');
    stream = await docker.buildImage(tar.stdout, {
      t: tag,
      labels,
      dockerfile: at.name,
      networkmode: at.network,
      // The classic builder, whose reading of a Dockerfile dockerfile-parse.ts follows; BuildKit
      // would also honour a `# syntax=` line, running a frontend image the tenant chose.
      version: '1',
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

/**
 * Pushes an image to its registry; a failure is the registry's, not the build's, so it is
 * retried like a fetch.
 */
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
