// A frame as a Docker Swarm service, through the Engine API: the spec it gets, and creating,
// updating and reading it. Each task publishes the frame's port in host mode on a port the
// node picks; the agent's proxy balances over the tasks it checked healthy. (Swarm's routing
// mesh needs IPVS in the kernel, which not every host has, and it hides which task answers,
// so no task could be checked on its own.) Updates start the new task first and roll back
// when new tasks fail.
import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { APP_USER, needsOwnTmp } from '../../builder/dockerfile.ts';
import { LABEL } from '../../builder/image.ts';
import type { Release, Volume } from '../runtime.ts';
import { volumeName } from '../docker-volume.ts';

export interface ServiceInput {
  frameId: string;
  release: Release;
  env: Record<string, string>;
  replicas: number;
  port: number;
  volumes: Volume[];
  memoryMb: number;
  cpus: number;
  /** The image's own user, if not root; else the unprivileged one. */
  user: string;
  /** The image asked for a read-only root (dockerfile.ts `wantsReadOnlyRoot`). */
  readOnlyRoot?: boolean;
  /** Without a registry, images exist on this node only: tasks must run here. */
  nodeId?: string;
}

export const serviceName = (frameId: string) =>
  `fp-${frameId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;

export function serviceSpec(i: ServiceInput) {
  const memory = i.memoryMb * 1024 * 1024;
  const env = {
    ...i.env,
    PORT: String(i.port),
    FRAMEPLANE_FRAME_ID: i.frameId,
    FRAMEPLANE_DEPLOYMENT_ID: i.release.deploymentId,
  };
  const spec = {
    Name: serviceName(i.frameId),
    Labels: { [LABEL]: i.frameId },
    TaskTemplate: {
      ContainerSpec: {
        Image: i.release.artifact,
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        User: i.user || APP_USER,
        Labels: {
          [LABEL]: i.frameId,
          'frameplane.deployment': i.release.deploymentId,
          'frameplane.commit': i.release.commitSha,
        },
        Mounts: [
          ...i.volumes.map((v) => ({
            Type: 'volume',
            Source: volumeName(v),
            Target: v.mount_path,
          })),
          ...(needsOwnTmp(i.readOnlyRoot === true, i.volumes)
            ? [{ Type: 'tmpfs', Target: '/tmp', TmpfsOptions: { SizeBytes: memory, Mode: 0o1777 } }]
            : []),
        ],
        ReadOnly: i.readOnlyRoot === true,
        CapabilityDrop: ['ALL'],
        Init: true,
        StopGracePeriod: 10e9,
      },
      Resources: { Limits: { MemoryBytes: memory, NanoCPUs: Math.round(i.cpus * 1e9), Pids: 512 } },
      // Swarm replaces a failed task after a pause; each failure is still reported as a crash,
      // so the server's back-off counts them and stops the frame.
      RestartPolicy: { Condition: 'any', Delay: 2e9, MaxAttempts: 0 },
      Placement: i.nodeId ? { Constraints: [`node.id==${i.nodeId}`] } : {},
      LogDriver: { Name: 'json-file', Options: { 'max-size': '10m', 'max-file': '2' } },
    },
    Mode: { Replicated: { Replicas: i.replicas } },
    UpdateConfig: {
      Parallelism: 1,
      Delay: 0,
      FailureAction: 'rollback',
      Monitor: 15e9,
      MaxFailureRatio: 0,
      Order: 'start-first',
    },
    RollbackConfig: {
      Parallelism: 1,
      Delay: 0,
      FailureAction: 'pause',
      Monitor: 5e9,
      MaxFailureRatio: 0,
      Order: 'start-first',
    },
    EndpointSpec: {
      Mode: 'dnsrr',
      Ports: [{ Protocol: 'tcp', TargetPort: i.port, PublishMode: 'host' }],
    },
  };
  // What the spec says, as a label: an update is sent only when it changed.
  const digest = createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 16);
  return { ...spec, Labels: { ...spec.Labels, 'frameplane.spec': digest } };
}

export async function findService(docker: Docker, frameId: string) {
  const found = await docker.listServices({
    filters: JSON.stringify({ name: [serviceName(frameId)] }),
  });
  return found.find((s) => s.Spec?.Name === serviceName(frameId));
}

/** Creates the service, or updates it if its spec changed; answers whether anything was sent. */
export async function applyService(
  docker: Docker,
  spec: ReturnType<typeof serviceSpec>,
): Promise<boolean> {
  const frameId = spec.Labels[LABEL];
  if (!frameId) throw new Error('a service spec without its frame label');
  const existing = await findService(docker, frameId);
  if (!existing) {
    await docker.createService(spec as unknown as Docker.CreateServiceOptions);
    return true;
  }
  if (existing.Spec?.Labels?.['frameplane.spec'] === spec.Labels['frameplane.spec']) return false;
  await docker
    .getService(existing.ID)
    .update({ version: existing.Version?.Index, ...spec } as unknown as Docker.ServiceSpec);
  return true;
}

/** Scales the service to `replicas` (0 stops it) without touching the rest of its spec. */
export async function scaleService(docker: Docker, frameId: string, replicas: number) {
  const existing = await findService(docker, frameId);
  if (!existing?.Spec) return;
  const spec = existing.Spec as ReturnType<typeof serviceSpec>;
  if (spec.Mode?.Replicated?.Replicas === replicas) return;
  const Labels = { ...spec.Labels, 'frameplane.spec': `scaled-${replicas}` };
  await docker.getService(existing.ID).update({
    version: existing.Version?.Index,
    ...spec,
    Labels,
    Mode: { Replicated: { Replicas: replicas } },
  } as unknown as Docker.ServiceSpec);
}

/** The fields of a task of the Engine API (GET /tasks) that a TaskView is made of. */
interface DockerTask {
  ID: string;
  Slot?: number;
  DesiredState?: string;
  NodeID?: string;
  CreatedAt?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  Status?: {
    State?: string;
    Err?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
    PortStatus?: { Ports?: Array<{ PublishedPort?: number }> };
  };
}

export interface TaskView {
  id: string;
  slot: number;
  state: string;
  desired: string;
  nodeId: string;
  createdAt: string;
  deploymentId: string;
  containerId?: string;
  exitCode?: number;
  error?: string;
  publishedPort?: number;
}

export async function tasksOf(docker: Docker, frameId: string): Promise<TaskView[]> {
  const tasks = await docker.listTasks({
    filters: JSON.stringify({ service: [serviceName(frameId)] }),
  });
  return (tasks as DockerTask[]).map((t) => ({
    id: t.ID,
    slot: t.Slot ?? 0,
    state: t.Status?.State ?? 'unknown',
    desired: t.DesiredState ?? '',
    nodeId: t.NodeID ?? '',
    createdAt: t.CreatedAt ?? '',
    deploymentId: t.Spec?.ContainerSpec?.Labels?.['frameplane.deployment'] ?? '',
    containerId: t.Status?.ContainerStatus?.ContainerID,
    exitCode: t.Status?.ContainerStatus?.ExitCode,
    error: t.Status?.Err,
    publishedPort: t.Status?.PortStatus?.Ports?.[0]?.PublishedPort,
  }));
}
