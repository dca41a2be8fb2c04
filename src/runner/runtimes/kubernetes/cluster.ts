// The agent's hold on a Kubernetes cluster (issue 40): the config (KUBECONFIG, or the pod's
// service account when the agent runs in the cluster), the API clients it uses, and the few
// verbs the supervisor needs. Objects are sent with server-side apply under the field manager
// `frameplane`: sending the same manifest twice changes nothing, and a field another manager
// set (an operator's annotation, an HPA's replicas) is not fought over unless we own it.
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  PatchStrategy,
  type V1Deployment,
} from '@kubernetes/client-node';

export const FIELD_MANAGER = 'frameplane';

export interface Cluster {
  config: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  objects: KubernetesObjectApi;
  /** Creates or updates `obj` to what it says (server-side apply); the server's copy. */
  apply<T extends KubernetesObject>(obj: T): Promise<T>;
  /** Deletes an object if it is there; its dependents go with it (background cascade). */
  remove(obj: KubernetesObject): Promise<void>;
  /** The frame's Deployment, or undefined. */
  deployment(namespace: string, name: string): Promise<V1Deployment | undefined>;
  /** Where the API server is, for the agent's log. */
  server: string;
}

/** `KUBECONFIG` (or ~/.kube/config), else the in-cluster service account. */
export function loadConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromDefault();
  if (!config.getCurrentCluster())
    throw new Error('FRAME_RUNTIME=kubernetes: no cluster in KUBECONFIG, and not in a pod');
  return config;
}

export const isNotFound = (err: unknown) => err instanceof ApiException && err.code === 404;

export function connect(config = loadConfig()): Cluster {
  const objects = KubernetesObjectApi.makeApiClient(config);
  const apps = config.makeApiClient(AppsV1Api);
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    apps,
    objects,
    server: config.getCurrentCluster()?.server ?? '',
    apply: <T extends KubernetesObject>(obj: T) =>
      objects.patch(
        obj,
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        PatchStrategy.ServerSideApply,
      ) as Promise<T>,
    async remove(obj) {
      try {
        await objects.delete(obj, undefined, undefined, undefined, undefined, 'Background');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    async deployment(namespace, name) {
      try {
        return await apps.readNamespacedDeployment({ namespace, name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
  };
}

/** Whether the API server answers with this config (for the runtime's choice at start). */
export async function clusterAnswers(c: Cluster): Promise<string | undefined> {
  try {
    await c.core.listNamespace({ limit: 1 });
    return undefined;
  } catch (err) {
    return err instanceof ApiException ? `HTTP ${err.code}` : (err as Error).message;
  }
}
