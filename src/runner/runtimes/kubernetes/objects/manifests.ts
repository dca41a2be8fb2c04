// A frame as Kubernetes objects (issue 40), from what the swarm runtime gets for its service
// (swarm/service.ts): a Deployment of `replica_count` pods (pod.ts), its env as a Secret, a
// claim per volume, all labelled with the frame (names.ts); the NetworkPolicy is
// network-policy.ts's. Pure: the supervisor sends what these return.
//
// What goes when: the Secret and the NetworkPolicy carry an owner reference to the Deployment,
// so Kubernetes removes them with it (and the ReplicaSets and pods, its own). Claims carry none:
// a frame's volumes outlive its Deployment, as its docker volumes outlive its containers (kept
// when a frame or a volume leaves the agent, docs/api.md), so no data goes with a click; the
// operator removes them by their labels. Env Secrets are named by their content, so an older
// ReplicaSet still finds its own env (a rollback needs it); the supervisor deletes those no kept
// ReplicaSet names. The namespace, per project, stays while any frame of the project is in it.
import type {
  V1Deployment,
  V1Namespace,
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1Secret,
} from '@kubernetes/client-node';
import { RELEASES_KEPT } from '../../../supervisor.ts';
import {
  frameLabels,
  LABELS,
  labelValue,
  MANAGED_BY,
  objectName,
  releaseLabels,
} from '../names.ts';
import { claimName, envSecretName, type FrameObjectsInput, podTemplate } from './pod.ts';

export type { FrameObjectsInput } from './pod.ts';

export const deploymentName = (frameId: string) => objectName(frameId);

export function frameDeployment(i: FrameObjectsInput): V1Deployment {
  const labels = releaseLabels(i.frameId, i.release.deploymentId, i.release.commitSha);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: deploymentName(i.frameId), namespace: i.namespace, labels },
    spec: {
      replicas: i.replicas,
      // The frame's label only: a selector cannot change, releases do.
      selector: { matchLabels: { [LABELS.frame]: labelValue('frame', i.frameId) } },
      // A new pod is Ready before an old one goes: a release that never is leaves the old serving.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      revisionHistoryLimit: RELEASES_KEPT,
      template: podTemplate(i),
    },
  };
}

/** The frame's env, for the pods' envFrom. Immutable: a changed env is another Secret. */
export function envSecret(i: FrameObjectsInput, owner: V1OwnerReference[] = []): V1Secret {
  const data = Object.fromEntries(
    Object.entries(i.env).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]),
  );
  const name = envSecretName(i.frameId, i.env);
  const metadata = { name, namespace: i.namespace, labels: frameLabels(i.frameId) };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: owner.length ? { ...metadata, ownerReferences: owner } : metadata,
    type: 'Opaque',
    immutable: true,
    // The server stores no `data` for an empty one: sending `{}` again would be a change,
    // which an immutable Secret refuses.
    ...(Object.keys(data).length ? { data } : {}),
  };
}

/**
 * A claim per volume. One node mounts it at a time (ReadWriteOnce): pods of the frame on other
 * nodes wait, as a node's volumes are its own on swarm. Create them before the Deployment.
 */
export function volumeClaims(i: FrameObjectsInput): V1PersistentVolumeClaim[] {
  return i.volumes.map((v) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(v),
      namespace: i.namespace,
      labels: { ...frameLabels(i.frameId), [LABELS.volume]: labelValue('volume', v.id) },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: `${v.size_gb}Gi` } },
      ...(i.storageClass ? { storageClassName: i.storageClass } : {}),
    },
  }));
}

/**
 * The project's namespace. Where Pod Security admission runs (1.23 on), `restricted` refuses a
 * pod that would loosen the pods' confinement (pod.ts); host-network pods need it off.
 */
export function projectNamespace(name: string, projectId?: string, hostNetwork = false) {
  const ns: V1Namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: {
        ...MANAGED_BY,
        ...(projectId ? { [LABELS.project]: labelValue('project', projectId) } : {}),
        ...(hostNetwork ? {} : { 'pod-security.kubernetes.io/enforce': 'restricted' }),
      },
    },
  };
  return ns;
}

/**
 * What hangs off the Deployment, once it exists (its uid is the server's). Not a controller
 * reference, and without blockOwnerDeletion, which needs rights on the Deployment's finalizers.
 */
export function ownedBy(d: V1Deployment): V1OwnerReference[] {
  const { name, uid } = d.metadata ?? {};
  if (!name || !uid) throw new Error('kubernetes: an owner must be a Deployment the server made');
  return [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid }];
}
