// The Dockerfile of a repository that brings none: the plan of plan.ts on FRAME_BASE_IMAGE,
// run as the unprivileged user 1000 (the `node` user of the official images), code in /app.
import { createHash } from 'node:crypto';
import type { RunPlan } from './plan.ts';

/** The user that generated images run as, by number: the image need not name it. */
export const APP_USER = '1000:1000';

/**
 * Whether an image's USER is root: unset, `root`, an empty user part (`:1`), or uid 0 however
 * the Engine reads the number (Go's Atoi: `00`, `+0`, `-0`). A name that the image's own
 * /etc/passwd maps to uid 0 cannot be seen from here.
 */
export function isRootUser(imageUser: string | undefined): boolean {
  const user = (imageUser ?? '').split(':')[0] ?? '';
  return user === '' || user === 'root' || (/^[+-]?[0-9]+$/.test(user) && Number(user) === 0);
}

/** The user a container of an image runs as: the image's own, unless that is root (or unset). */
export const runAsUser = (imageUser: string | undefined) =>
  isRootUser(imageUser) ? APP_USER : (imageUser as string);

/**
 * Who a new volume is handed to, for an app that runs as `runAs`: that uid (and gid) when they
 * are numbers; a user named in the image is unknown to the helper that chowns (a base image),
 * so the app user stands in, which is the uid of the usual `node` or `app` user.
 */
export const volumeOwner = (runAs: string) => (/^\d+(:\d+)?$/.test(runAs) ? runAs : APP_USER);

/**
 * The label by which an image says its app writes only to /tmp and its volumes, so that its
 * containers may run with a read-only root: `LABEL frameplane.read-only-root=true` in its
 * Dockerfile. Opt-in, as nothing else tells whether an app writes beside its code.
 */
export const READ_ONLY_ROOT_LABEL = 'frameplane.read-only-root';

/** Whether an image's labels ask for a read-only root (`true`, any case, spaces aside). */
export const wantsReadOnlyRoot = (labels: Record<string, string> | null | undefined) =>
  labels?.[READ_ONLY_ROOT_LABEL]?.trim().toLowerCase() === 'true';

/** A read-only root keeps /tmp writable (a tmpfs of its own), unless a volume is mounted there. */
export const needsOwnTmp = (
  readOnlyRoot: boolean,
  volumes: ReadonlyArray<{ mount_path: string }>,
) => readOnlyRoot && !volumes.some((v) => v.mount_path === '/tmp');

export function generatedDockerfile(plan: RunPlan, baseImage: string): string {
  return [
    `FROM ${baseImage}`,
    // COPY creates /app itself with this owner, so the build may write node_modules there.
    `COPY --chown=${APP_USER} . /app`,
    'WORKDIR /app',
    `USER ${APP_USER}`,
    'ENV HOME=/tmp NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false',
    ...plan.build.map((step) => `RUN ${step}`),
    `CMD ${JSON.stringify(['sh', '-c', plan.command])}`,
    '',
  ].join('\n');
}

/** A short digest of how an image is made: a tag's image is reused only if made the same way. */
export const recipeOf = (text: string) =>
  createHash('sha256').update(text).digest('hex').slice(0, 16);
