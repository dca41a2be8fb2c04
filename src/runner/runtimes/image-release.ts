// The image of a deployment, for the runtimes that run whole frames from images (swarm/frame.ts,
// kubernetes/frame.ts): a rollback's or a restart's image when it is still here (nothing
// fetched, nothing built), else the source fetched and built (builder/image.ts), and pushed to
// the registry when there is one.
import type Docker from 'dockerode';
import { buildImage, imageRepo, inspectImage } from '../builder/image.ts';
import type { DesiredFrame } from '../protocol.ts';
import { nowIso, type SupervisorDeps } from '../supervisor.ts';
import { BuildError, type Release } from './runtime.ts';

export interface ImageOptions {
  docker: Docker;
  baseImage: string;
  /** Where images go so every node can pull them. */
  registry?: string;
}

export async function imageRelease(
  o: ImageOptions,
  frameId: string,
  spec: DesiredFrame,
  deps: SupervisorDeps,
  signal: AbortSignal,
): Promise<Release> {
  return (await kept(o, frameId, spec, deps)) ?? buildNew(o, frameId, spec, deps, signal);
}

/** Fetches and builds the deployment's image (or reuses one built from the same recipe). */
function buildNew(
  o: ImageOptions,
  frameId: string,
  spec: DesiredFrame,
  deps: SupervisorDeps,
  signal: AbortSignal,
) {
  const deploymentId = spec.deployment_id;
  return buildImage(
    o.docker,
    o.baseImage,
    {
      frameId,
      deploymentId,
      signal,
      source: {
        gitBaseUrl: deps.gitBaseUrl,
        owner: spec.git_repository_owner,
        repo: spec.git_repository,
        branch: spec.git_repository_branch,
        commitSha: spec.commit_sha,
      },
      onLine: (l) => deps.line(frameId, 0, l),
      onFetched: (sha) =>
        deps.build({
          deployment_id: deploymentId,
          state: 'building',
          commit_sha: sha,
          at: nowIso(),
        }),
    },
    o.registry,
  );
}

/**
 * A rollback's or a restart's image, if it is still here. Images are kept per commit until the
 * frame goes (pruned at its removal only).
 */
async function kept(
  o: ImageOptions,
  frameId: string,
  spec: DesiredFrame,
  deps: SupervisorDeps,
): Promise<Release | undefined> {
  if (!spec.release_of || !spec.commit_sha) return undefined;
  const prefix = o.registry ? `${o.registry}/` : '';
  const artifact = `${prefix}${imageRepo(frameId)}:${spec.commit_sha}`;
  const image = await inspectImage(o.docker, artifact).catch(() => undefined);
  if (!image) return undefined;
  deps.line(
    frameId,
    0,
    `[frameplane] deployment ${spec.deployment_id}: the image of ${spec.release_of} ` +
      `(${spec.commit_sha.slice(0, 12)}) again, nothing to build`,
  );
  return {
    deploymentId: spec.deployment_id,
    artifact,
    commitSha: spec.commit_sha,
    image: image.Id,
  };
}

/**
 * Says why a deployment's image could not be made. A clone or a push that failed is each
 * replica's crash (`report`), so that the server's back-off counts it; it is tried again on the
 * next change of the desired state. A build that failed is final: the deployment's failed
 * build. True when final (the caller never tries that deployment again).
 */
export function reportImageError(
  deps: SupervisorDeps,
  frameId: string,
  deploymentId: string,
  err: Error,
  replicas: number,
  report: (replica: number, deploymentId: string, detail: Record<string, unknown>) => void,
): boolean {
  const message = err.message.slice(0, 2000);
  const reason = err instanceof BuildError ? err.reason : 'build_failed';
  const what = reason === 'build_failed' ? 'build' : 'fetch';
  deps.line(frameId, 0, `[frameplane] ${what} failed: ${message}`);
  if (reason !== 'build_failed') {
    for (let i = 0; i < replicas; i++) report(i, deploymentId, { reason, message });
    return false;
  }
  deps.build({ deployment_id: deploymentId, state: 'failed', message, at: nowIso() });
  return true;
}
