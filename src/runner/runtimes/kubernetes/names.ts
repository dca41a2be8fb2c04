// Names and labels of a frame's Kubernetes objects (the `kubernetes` runtime, issue 40). Names
// follow the docker and swarm runtimes (`fp-<id lowercased>`) so an operator finds a frame's
// objects by the same name everywhere. Label values are ids as the service makes them
// (`frm_<ULID>`, `dep_<ULID>`, a commit sha), which Kubernetes takes as they are: so the labels
// read back from a pod are the ids themselves, never an encoding of them. Pure.
import { createHash } from 'node:crypto';

export const LABELS = {
  frame: 'frameplane.dev/frame',
  deployment: 'frameplane.dev/deployment',
  commit: 'frameplane.dev/commit',
  volume: 'frameplane.dev/volume',
  project: 'frameplane.dev/project',
} as const;

/** The one container of a frame's pod. */
export const CONTAINER = 'app';

export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'frameplane' } as const;

/** The label selector of every object Frameplane made. */
export const MANAGED_SELECTOR = Object.entries(MANAGED_BY)
  .map(([k, v]) => `${k}=${v}`)
  .join(',');

/** A DNS-1123 label: what names of namespaces, pods' Deployments, Secrets and claims must be. */
const MAX_NAME = 63;
/** A label value: 63 characters at most, alphanumeric at both ends, `-_.` inside; or empty. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * `fp-<id>` lower-cased, each run of other characters than [a-z0-9] one `-`, within 63
 * characters (cut, with a digest of the whole id so that long ids stay apart). The service's
 * ids (a prefix, `_`, an upper-case ULID) map one to one.
 */
export function objectName(id: string, suffix = ''): string {
  const clean = id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const tail = suffix ? `-${suffix}` : '';
  const name = `fp-${clean || 'x'}${tail}`;
  if (name.length <= MAX_NAME) return name;
  const digest = createHash('sha256').update(id).digest('hex').slice(0, 8);
  const room = MAX_NAME - 'fp-'.length - tail.length - digest.length - 1;
  return `fp-${clean.slice(0, room).replace(/-+$/, '')}-${digest}${tail}`;
}

/** The namespace of a project's frames: the operator's one, else `fp-<project id>`. */
export function namespaceOf(o: { projectId?: string; namespace?: string }): string {
  if (o.namespace) return o.namespace;
  if (!o.projectId) throw new Error('kubernetes: a frame needs its project id or a namespace');
  return objectName(o.projectId);
}

/** An id as a label value; an id Kubernetes would refuse is refused here, by name. */
export function labelValue(what: string, id: string): string {
  if (id.length > MAX_NAME || !LABEL_VALUE.test(id))
    throw new Error(`kubernetes: the ${what} id "${id}" cannot be a label value`);
  return id;
}

/** The labels every object of the frame carries; the Deployment selects its pods by these. */
export const frameLabels = (frameId: string) => ({
  ...MANAGED_BY,
  [LABELS.frame]: labelValue('frame', frameId),
});

/** The frame's labels and those of one of its releases (pods, their template, the Deployment). */
export const releaseLabels = (frameId: string, deploymentId: string, commitSha: string) => ({
  ...frameLabels(frameId),
  [LABELS.deployment]: labelValue('deployment', deploymentId),
  [LABELS.commit]: labelValue('commit', commitSha),
});
