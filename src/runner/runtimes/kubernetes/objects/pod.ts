// The pod template of a frame's Deployment (issue 40): the release's image, run with the docker
// runtime's confinement (docker.ts): a user that is not root, no privilege gain, every
// capability dropped, the runtime's default seccomp profile, no service account token, the
// frame's memory and CPU limits (the pids limit is the kubelet's podPidsLimit: a pod spec has
// none). The frame's env comes from a Secret named by its content. Pure.
import { createHash } from 'node:crypto';
import type {
  V1Container,
  V1PodSecurityContext,
  V1PodTemplateSpec,
  V1Probe,
} from '@kubernetes/client-node';
import { needsOwnTmp, runAsUser } from '../../../builder/dockerfile.ts';
import type { Release, Volume } from '../../runtime.ts';
import { CONTAINER, objectName, releaseLabels } from '../names.ts';

export interface FrameObjectsInput {
  frameId: string;
  namespace: string;
  release: Release;
  env: Record<string, string>;
  replicas: number;
  /** The port the app listens on (PORT); on the host network, the host port the agent chose. */
  port: number;
  /** `GET` this for readiness; empty: a TCP connect. */
  healthCheckPath: string;
  volumes: Volume[];
  memoryMb: number;
  cpus: number;
  /** The image's USER as the Engine reports it; root or unset runs as the unprivileged user. */
  imageUser?: string;
  /**
   * Pods on the node's network, for clusters without a network plugin (the test cluster). The
   * port is then the node's: one pod per node and port (the scheduler keeps two apart, so on
   * one node a rollout's extra pod waits unless its release has a port of its own), pods see
   * the node's loopback, and a NetworkPolicy does not apply to them.
   */
  hostNetwork?: boolean;
  /** The image asked for a read-only root (dockerfile.ts `wantsReadOnlyRoot`). */
  readOnlyRootFilesystem?: boolean;
  /** Without a registry the image exists on the node that built it only: pods run there. */
  node?: string;
  /** The claims' class; else the cluster's default class. */
  storageClass?: string;
}

/** As swarm's StopGracePeriod: SIGTERM, then SIGKILL 10 s later. */
const GRACE_SECONDS = 10;

export const claimName = (v: Volume) => objectName(v.id);

/** Named by its content: a changed env is a new Secret, and so a new pod template (a rollout). */
export function envSecretName(frameId: string, env: Record<string, string>): string {
  const sorted = Object.keys(env)
    .sort()
    .map((k) => [k, env[k]]);
  const digest = createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 10);
  return objectName(frameId, `env-${digest}`);
}

/** The pods' user, as the docker runtime picks it (runAsUser), in the numbers Kubernetes takes. */
export function podUser(imageUser: string | undefined): { uid: number; gid?: number } {
  const [user = '', group] = runAsUser(imageUser).split(':');
  // Kubernetes takes ids up to 2^31-1.
  const num = (s: string | undefined) =>
    s && /^[0-9]+$/.test(s) && Number(s) < 2 ** 31 ? Number(s) : undefined;
  const uid = num(user);
  // A user named, not numbered, is known only to the image's /etc/passwd, and the kubelet
  // refuses to check a name against runAsNonRoot: such images run as the generated images do.
  if (uid === undefined || uid === 0) return { uid: 1000, gid: 1000 };
  const gid = num(group);
  // Without a group, the runtime takes the user's from the image, as Docker does.
  return gid === undefined ? { uid } : { uid, gid };
}

function securityContext(i: FrameObjectsInput): V1PodSecurityContext {
  const { uid, gid } = podUser(i.imageUser);
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    ...(gid === undefined ? {} : { runAsGroup: gid }),
    // New volumes are the app's group's (the docker runtime hands them to the app's user).
    fsGroup: gid ?? uid,
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * Readiness only: a pod that fails it leaves the route, as on docker; no liveness probe
 * restarts it. Kubernetes passes 200-399 where the agent's own check passes below 500.
 */
function readiness(i: FrameObjectsInput): V1Probe {
  // On the host network the kubelet reaches the pod on loopback, whatever the node's address.
  const host = i.hostNetwork ? { host: '127.0.0.1' } : {};
  const check = i.healthCheckPath
    ? { httpGet: { path: i.healthCheckPath, port: i.port, ...host } }
    : { tcpSocket: { port: i.port, ...host } };
  return {
    ...check,
    periodSeconds: 2,
    timeoutSeconds: 3,
    failureThreshold: 3,
    successThreshold: 1,
  };
}

const needsTmp = (i: FrameObjectsInput) =>
  needsOwnTmp(i.readOnlyRootFilesystem === true, i.volumes);

function container(i: FrameObjectsInput): V1Container {
  const { uid, gid } = podUser(i.imageUser);
  const millicpu = Math.max(1, Math.round(i.cpus * 1000));
  const mounts = i.volumes.map((v) => ({ name: claimName(v), mountPath: v.mount_path }));
  return {
    name: CONTAINER,
    image: i.release.artifact,
    // Tagged by commit, built here or pushed once: never pulled again for the same tag.
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'app', containerPort: i.port, protocol: 'TCP' }],
    // The frame's own come from its Secret; these, set by the platform, win over them.
    envFrom: [{ secretRef: { name: envSecretName(i.frameId, i.env) } }],
    env: [
      { name: 'PORT', value: String(i.port) },
      { name: 'FRAMEPLANE_FRAME_ID', value: i.frameId },
      { name: 'FRAMEPLANE_DEPLOYMENT_ID', value: i.release.deploymentId },
    ],
    resources: {
      limits: { memory: `${i.memoryMb}Mi`, cpu: `${millicpu}m` },
      // Docker reserves nothing; a tenth lets small nodes hold a rollout's extra pod.
      requests: {
        memory: `${Math.max(1, Math.round(i.memoryMb / 10))}Mi`,
        cpu: `${Math.max(1, Math.round(millicpu / 10))}m`,
      },
    },
    securityContext: {
      privileged: false,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: i.readOnlyRootFilesystem === true,
      runAsNonRoot: true,
      runAsUser: uid,
      ...(gid === undefined ? {} : { runAsGroup: gid }),
    },
    readinessProbe: readiness(i),
    // A crash's message is the log's tail when the app wrote no termination message.
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: needsTmp(i) ? [...mounts, { name: 'tmp', mountPath: '/tmp' }] : mounts,
  };
}

/** The pods of one release of the frame. */
export function podTemplate(i: FrameObjectsInput): V1PodTemplateSpec {
  const labels = releaseLabels(i.frameId, i.release.deploymentId, i.release.commitSha);
  return {
    metadata: { labels },
    spec: {
      containers: [container(i)],
      securityContext: securityContext(i),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: i.hostNetwork === true,
      hostPID: false,
      hostIPC: false,
      // The pause container is PID 1 and reaps orphans, as Docker's init does (Init: true).
      shareProcessNamespace: true,
      dnsPolicy: i.hostNetwork ? 'Default' : 'ClusterFirst',
      terminationGracePeriodSeconds: GRACE_SECONDS,
      ...(i.node ? { nodeSelector: { 'kubernetes.io/hostname': i.node } } : {}),
      volumes: [
        ...i.volumes.map((v) => ({
          name: claimName(v),
          persistentVolumeClaim: { claimName: claimName(v) },
        })),
        // As big as the sandbox's /tmp on the process runtime (confine.ts): the memory limit.
        ...(needsTmp(i) ? [{ name: 'tmp', emptyDir: { sizeLimit: `${i.memoryMb}Mi` } }] : []),
      ],
    },
  };
}
