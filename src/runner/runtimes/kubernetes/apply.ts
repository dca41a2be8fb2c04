// What the supervisor sends to the cluster for a frame (issue 40), in the order that leaves no
// moment where a pod waits on something missing: the project's namespace, the claims, the env
// Secret, the Deployment, then the Secret and the NetworkPolicy owned by the Deployment (so
// that deleting it takes them along), and the Service and Ingress where the operator routes
// with an Ingress controller (ingress.ts). Going back to an earlier release puts that release's
// pod template back (rollback.ts). Removing a frame deletes its Deployment (its ReplicaSets,
// pods, Secrets and policy follow) and the namespace once nothing of Frameplane's is left in it.
import type { V1Deployment } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import type { Cluster } from './cluster.ts';
import {
  deploymentName,
  envSecret,
  type FrameObjectsInput,
  frameDeployment,
  ownedBy,
  projectNamespace,
  volumeClaims,
} from './objects/manifests.ts';
import { framePolicy } from './objects/network-policy.ts';
import { frameIngress, frameService, type IngressOptions } from './objects/ingress.ts';
import { LABELS, MANAGED_SELECTOR } from './names.ts';
import { earlierTemplate, withTemplate } from './objects/rollback.ts';

export interface Placement {
  /** The namespace is the project's own (made and removed here), not the operator's. */
  ownNamespace: boolean;
  projectId?: string;
  /** The cluster's pod and service ranges, kept out of the pods' egress. */
  clusterCidrs: string[];
  /** The operator's Ingress controller (KUBERNETES_INGRESS_CLASS), and the frame's hosts. */
  ingress?: IngressOptions;
  hosts?: readonly string[];
}

const selector = (frameId: string) => `${LABELS.frame}=${frameId}`;

/** Sends the frame's objects; the Deployment as the server now holds it. */
export async function applyFrame(
  c: Cluster,
  i: FrameObjectsInput,
  p: Placement,
): Promise<V1Deployment> {
  if (p.ownNamespace) await c.apply(projectNamespace(i.namespace, p.projectId));
  for (const claim of volumeClaims(i)) await c.apply(claim);
  const before = await c.deployment(i.namespace, deploymentName(i.frameId));
  if (!before) await c.apply(envSecret(i));
  const d = await c.apply(frameDeployment(i));
  const owner = ownedBy(d);
  await c.apply(envSecret(i, owner));
  const frame = { frameId: i.frameId, namespace: i.namespace };
  await c.apply(framePolicy({ ...frame, port: i.port, clusterCidrs: p.clusterCidrs }, owner));
  if (p.ingress) {
    const route = { ...frame, hosts: p.hosts ?? [] };
    await c.apply(frameService(route, owner));
    const ingress = frameIngress(route, p.ingress, owner);
    // An Ingress needs a rule; a frame without a host (an older service's) has none.
    await (route.hosts.length ? c.apply(ingress) : c.remove(ingress));
  }
  return d;
}

/** Scales the frame's Deployment, if there is one (stop: to zero). */
export async function scaleFrame(c: Cluster, namespace: string, frameId: string, n: number) {
  const name = deploymentName(frameId);
  if (!(await c.deployment(namespace, name))) return;
  await c.objects.patch(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: { replicas: n },
    },
    undefined,
    undefined,
    undefined,
    undefined,
    PatchStrategy.MergePatch,
  );
}

/**
 * Puts back the pod template of release `deploymentId` (its newest kept ReplicaSet). False
 * when no ReplicaSet of it is kept: the caller then sends that release's objects again.
 */
export async function rollBack(
  c: Cluster,
  namespace: string,
  frameId: string,
  deploymentId: string,
): Promise<boolean> {
  const d = await c.deployment(namespace, deploymentName(frameId));
  if (!d?.metadata?.name) return false;
  const sets = await c.apps.listNamespacedReplicaSet({
    namespace,
    labelSelector: selector(frameId),
  });
  const template = earlierTemplate(d, sets.items, deploymentId);
  if (!template) return false;
  await c.apps.replaceNamespacedDeployment({
    name: d.metadata.name,
    namespace,
    body: withTemplate(d, template),
  });
  return true;
}

/** Deletes the frame's objects (claims stay: volumes outlive their frame on this agent). */
export async function removeFrame(c: Cluster, namespace: string, frameId: string, own: boolean) {
  const name = deploymentName(frameId);
  await c.remove({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace } });
  // Secrets made before the Deployment had an owner to name, or by an agent that died between.
  const secrets = await c.core.listNamespacedSecret({
    namespace,
    labelSelector: selector(frameId),
  });
  for (const s of secrets.items)
    await c.remove({ apiVersion: 'v1', kind: 'Secret', metadata: { ...s.metadata, namespace } });
  if (own) await removeNamespaceIfEmpty(c, namespace);
}

/** The project's namespace goes once it holds no Deployment and no claim of Frameplane's. */
async function removeNamespaceIfEmpty(c: Cluster, namespace: string) {
  const [deployments, claims] = await Promise.all([
    c.apps.listNamespacedDeployment({ namespace, labelSelector: MANAGED_SELECTOR, limit: 1 }),
    c.core.listNamespacedPersistentVolumeClaim({
      namespace,
      labelSelector: MANAGED_SELECTOR,
      limit: 1,
    }),
  ]);
  if (deployments.items.length > 0 || claims.items.length > 0) return;
  await c.remove({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
}
