// The Engine's answer about each image a tenant's Dockerfile uses (dockerfile-policy.ts decides).
// Asked by the same string the builder will resolve, so the Engine resolves names, short and full
// ids and digests as the builder would. An image the Engine lacks is pulled here, before the
// build, as the builder would pull it: its ONBUILD triggers are then known before they run.
import type Docker from 'dockerode';
import type { Lookup } from './dockerfile-policy.ts';
import { FRAME_LABEL, isImageId, parseReference } from './image-reference.ts';

const PULL_TIMEOUT_MS = 10 * 60_000;

export async function lookUpImages(
  docker: Docker,
  refs: string[],
  signal: AbortSignal,
  onLine: (line: string) => void,
): Promise<Map<string, Lookup>> {
  const answers = new Map<string, Lookup>();
  for (const ref of new Set(refs)) answers.set(ref, await lookUp(docker, ref, signal, onLine));
  return answers;
}

async function lookUp(
  docker: Docker,
  ref: string,
  signal: AbortSignal,
  onLine: (line: string) => void,
): Promise<Lookup> {
  let image = await inspect(docker, ref);
  if (image === undefined) {
    const r = parseReference(ref);
    if (!r || isImageId(ref)) return { found: false, why: 'no such image here' };
    // Without a tag the Engine would pull every tag of the repository.
    const failed = await pull(docker, r.tag || r.digest ? ref : `${ref}:latest`, signal, onLine);
    if (failed)
      return { found: false, why: `not on this machine, and pulling it failed: ${failed}` };
    image = await inspect(docker, ref);
  }
  if (image === undefined) return { found: false, why: 'pulled, yet the Engine does not find it' };
  if (image instanceof Error) return { found: false, why: image.message };
  return {
    found: true,
    names: [...(image.RepoTags ?? []), ...(image.RepoDigests ?? [])],
    frame: image.Config?.Labels?.[FRAME_LABEL],
    onBuild: image.Config?.OnBuild ?? [],
  };
}

/** The image, undefined when the Engine has none by that reference, or the Engine's refusal. */
async function inspect(docker: Docker, ref: string) {
  try {
    return await docker.getImage(ref).inspect();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    return new Error(`the Engine answered: ${(err as Error).message}`);
  }
}

async function pull(
  docker: Docker,
  ref: string,
  signal: AbortSignal,
  onLine: (line: string) => void,
): Promise<string | undefined> {
  onLine(`[frameplane] pulling ${ref} to check it before the build`);
  try {
    const abortSignal = AbortSignal.any([signal, AbortSignal.timeout(PULL_TIMEOUT_MS)]);
    const stream = await docker.pull(ref, { abortSignal });
    return await new Promise<string | undefined>((resolve) =>
      docker.modem.followProgress(stream, (err: Error | null, out: Array<{ error?: string }>) =>
        resolve(err?.message ?? out.find((o) => o.error)?.error),
      ),
    );
  } catch (err) {
    return (err as Error).message;
  }
}
