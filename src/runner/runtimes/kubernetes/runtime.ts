// FRAME_RUNTIME=kubernetes (issue 40): frames as Deployments of a cluster (frame.ts), images
// built by a Docker Engine (DOCKER_HOST) as for swarm, pushed to FRAME_REGISTRY when the cluster
// has more nodes than the one that builds. Settings, read from the environment:
// - KUBECONFIG (or ~/.kube/config), else the agent's service account when it runs in a pod;
// - FRAME_NAMESPACE: one namespace the operator made for every frame (the agent then needs
//   rights there only); without it, a namespace per project, `fp-<project id>`, made and
//   removed by the agent (cluster rights on namespaces);
// - KUBERNETES_CLUSTER_CIDRS: the cluster's pod and service ranges, comma-separated, kept out
//   of the pods' egress by their NetworkPolicy (where the network plugin enforces one);
// - KUBERNETES_NODE: without a registry, the node whose Engine builds (its pods run there);
// - KUBERNETES_STORAGE_CLASS: the class of the volumes' claims, else the cluster's default;
// - KUBERNETES_INGRESS_CLASS: the operator's Ingress controller, given a Service and an Ingress
//   per frame (KUBERNETES_INGRESS_ANNOTATIONS, `k=v,…`, on each).
import type Docker from 'dockerode';
import type { AgentLog } from '../../log.ts';
import { clusterAnswers, connect, loadConfig } from './cluster.ts';
import { kubernetesSupervisor } from './frame.ts';
import { watchPods } from './watch.ts';
import { podUsage } from './pod-usage.ts';
import { parseAnnotations } from './objects/ingress.ts';

export interface KubernetesChoice {
  docker: Docker;
  baseImage: string;
  memoryMb: number;
  cpus: number;
  registry?: string;
  log: AgentLog;
  env?: NodeJS.ProcessEnv;
}

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

export async function kubernetesRuntime(o: KubernetesChoice) {
  const env = o.env ?? process.env;
  const cluster = connect(loadConfig());
  const why = await clusterAnswers(cluster);
  if (why) throw new Error(`FRAME_RUNTIME=kubernetes: the API server at ${cluster.server}: ${why}`);
  const namespace = env.FRAME_NAMESPACE || undefined;
  const node = env.KUBERNETES_NODE || undefined;
  const clusterCidrs = list(env.KUBERNETES_CLUSTER_CIDRS);
  o.log.info(
    { runtime: 'kubernetes', server: cluster.server, namespace: namespace ?? 'per project' },
    'frames run as Kubernetes Deployments',
  );
  if (!o.registry && !node)
    o.log.warn('no FRAME_REGISTRY nor KUBERNETES_NODE: images exist on the building node only');
  const warn = (err: unknown, what: string) => o.log.warn({ err }, what);
  const watch = watchPods(cluster, warn);
  return kubernetesSupervisor({
    cluster,
    watch,
    usage: podUsage(cluster, warn),
    docker: o.docker,
    baseImage: o.baseImage,
    registry: o.registry,
    memoryMb: o.memoryMb,
    cpus: o.cpus,
    namespace,
    node,
    clusterCidrs,
    storageClass: env.KUBERNETES_STORAGE_CLASS || undefined,
    ingress: env.KUBERNETES_INGRESS_CLASS
      ? {
          ingressClass: env.KUBERNETES_INGRESS_CLASS,
          annotations: parseAnnotations(env.KUBERNETES_INGRESS_ANNOTATIONS),
        }
      : undefined,
  });
}
