// The `docker` runtime: each replica is a container on the Docker Engine (API through dockerode).
// A container gets: the release's image, run as an unprivileged user; a memory limit without
// swap and a CPU quota; no capabilities and no privilege gain; its own network namespace on a
// bridge where containers cannot reach each other, with only the frame's port published, on
// loopback, for the agent's proxy; labels naming frame, deployment and replica; no restart
// policy, since crashes are counted by the supervisor and the server's back-off.
import { constants } from 'node:os';
import Docker from 'dockerode';
import { buildImage, inspectImage, LABEL, pruneImages } from '../builder/image.ts';
import { needsOwnTmp, runAsUser, wantsReadOnlyRoot } from '../builder/dockerfile.ts';
import { ensureVolume } from './docker-volume.ts';
import { followLogs, type LogFollower } from './docker-logs.ts';
import { ensureBridgeNetwork } from './docker-network.ts';
import { dockerUsage } from '../metrics/docker-stats.ts';
import type {
  ExitInfo,
  ReplicaRef,
  ReplicaRuntime,
  ReplicaSpec,
  RunningReplica,
  Release,
} from './runtime.ts';

export interface DockerOptions {
  docker: Docker;
  /** The image that generated Dockerfiles start FROM (FRAME_BASE_IMAGE). */
  baseImage: string;
  memoryMb: number;
  cpus: number;
  /** The bridge network of the frames (made with inter-container traffic off). */
  network: string;
}

export const DEFAULT_BASE_IMAGE = 'node:22-bookworm-slim';
export const DEFAULT_MEMORY_MB = 512;
export const DEFAULT_CPUS = 1;

/** A Docker client for DOCKER_HOST (unix:// or tcp://) or the default socket. */
export function dockerClient(host = process.env.DOCKER_HOST): Docker {
  if (!host) return new Docker({ socketPath: '/var/run/docker.sock' });
  if (host.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  const u = new URL(host.replace(/^tcp:/, 'http:'));
  return new Docker({ host: u.hostname, port: Number(u.port || 2375) });
}

/** True if the Engine answers within a second or two. */
export async function dockerAnswers(docker: Docker): Promise<boolean> {
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000)),
    ]);
    return true;
  } catch {
    return false;
  }
}

const signalName = (code: number) =>
  Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] ?? null;

export function createDockerRuntime(o: DockerOptions): ReplicaRuntime {
  const { docker } = o;

  const ensureNetwork = () => ensureBridgeNetwork(docker, o.network);

  function watch(
    container: Docker.Container,
    endpoint: { host: string; port: number },
    logs: LogFollower,
  ): RunningReplica {
    let detached = false;
    let removed = false;
    const remove = async () => {
      if (!removed) {
        removed = true;
        await container.remove({ force: true }).catch(() => {});
      }
    };
    const exit = (async (): Promise<ExitInfo> => {
      for (;;) {
        try {
          await container.wait();
        } catch {
          await new Promise((r) => setTimeout(r, 1000));
        } // the Engine restarted: ask again
        if (detached) return new Promise<ExitInfo>(() => {});
        const info = await container.inspect().catch((err: { statusCode?: number }) =>
          // Gone (404): it exited and was removed. Any other failure says nothing of the
          // container: a slow or restarting Engine must not end (and remove) a live replica.
          err.statusCode === 404 ? undefined : ('unknown' as const),
        );
        if (info === 'unknown') {
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        if (info?.State.Running) continue;
        const code = info?.State.ExitCode ?? null;
        logs.stop();
        await remove();
        return {
          code,
          signal: code !== null && code > 128 ? signalName(code) : null,
          oom: info?.State.OOMKilled === true,
        };
      }
    })();
    return {
      endpoint,
      exit,
      async stop(graceMs) {
        await container.stop({ t: Math.ceil(graceMs / 1000) }).catch(() => {});
        await Promise.race([exit, new Promise((r) => setTimeout(r, 5000))]);
        await remove();
      },
      detach() {
        detached = true;
        logs.stop();
      },
      ref: () => ({ id: container.id, endpoint, cursor: logs.cursor() }),
      usage: async () => (removed ? undefined : dockerUsage(docker, container.id)),
    };
  }

  async function endpointOf(container: Docker.Container, port: number) {
    const info = await container.inspect();
    const binding = info.NetworkSettings.Ports?.[`${port}/tcp`]?.[0];
    if (!binding)
      throw new Error(`container ${container.id.slice(0, 12)} publishes no port ${port}`);
    return { host: '127.0.0.1', port: Number(binding.HostPort) };
  }

  return {
    kind: 'docker',

    build: (r) => buildImage(docker, o.baseImage, r),

    reuse: async (_frameId: string, release: Release) =>
      (await inspectImage(docker, release.artifact)) !== undefined,

    async start(spec: ReplicaSpec, onLine) {
      await ensureNetwork();
      const image = await inspectImage(docker, spec.release.artifact);
      if (!image) throw new Error(`image ${spec.release.artifact} is gone`);
      // An image that would run as root runs as the unprivileged user instead.
      const user = runAsUser(image.Config?.User);
      const mounts = await Promise.all(
        spec.volumes.map(async (v) => ({
          Type: 'volume' as const,
          Source: await ensureVolume(docker, o.baseImage, v, user),
          Target: v.mount_path,
        })),
      );
      const env = {
        ...spec.env,
        PORT: String(spec.port),
        FRAMEPLANE_FRAME_ID: spec.frameId,
        FRAMEPLANE_DEPLOYMENT_ID: spec.deploymentId,
        FRAMEPLANE_REPLICA: String(spec.index),
      };
      const memory = o.memoryMb * 1024 * 1024;
      const readOnly = wantsReadOnlyRoot(image.Config?.Labels);
      const container = await docker.createContainer({
        Image: spec.release.artifact,
        User: user,
        Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
        ExposedPorts: { [`${spec.port}/tcp`]: {} },
        Labels: {
          [LABEL]: spec.frameId,
          'frameplane.deployment': spec.deploymentId,
          'frameplane.replica': String(spec.index),
          'frameplane.commit': spec.release.commitSha,
        },
        HostConfig: {
          PortBindings: { [`${spec.port}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: '' }] },
          NetworkMode: o.network,
          Memory: memory,
          MemorySwap: memory,
          NanoCpus: Math.round(o.cpus * 1e9),
          PidsLimit: 512,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges:true'],
          RestartPolicy: { Name: 'no' },
          Init: true,
          Mounts: mounts,
          // An image that asks for it (dockerfile.ts) gets a read-only root and a /tmp of its
          // own, as big as the memory it may use (a tmpfs counts against that limit).
          ReadonlyRootfs: readOnly,
          ...(needsOwnTmp(readOnly, spec.volumes)
            ? { Tmpfs: { '/tmp': `rw,nosuid,nodev,mode=1777,size=${o.memoryMb}m` } }
            : {}),
          LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
        },
      });
      try {
        await container.start();
        // From the container's first line: a stream opened before the start would end at once.
        const logs = await followLogs(docker, container, '', onLine);
        return watch(container, await endpointOf(container, spec.port), logs);
      } catch (err) {
        await container.remove({ force: true }).catch(() => {});
        throw err;
      }
    },

    async adopt(ref: ReplicaRef, onLine) {
      const container = docker.getContainer(ref.id);
      const info = await container.inspect().catch(() => undefined);
      if (!info) return undefined;
      if (!info.State.Running) {
        await container.remove({ force: true }).catch(() => {});
        return undefined;
      }
      const port = Number(Object.keys(info.Config.ExposedPorts ?? {})[0]?.split('/')[0]);
      const logs = await followLogs(docker, container, ref.cursor, onLine);
      return watch(container, await endpointOf(container, port), logs);
    },

    prune: (frameId, keep) => pruneImages(docker, frameId, new Set(keep.map((r) => r.artifact))),

    async forget(frameId) {
      const left = await docker.listContainers({
        all: true,
        filters: JSON.stringify({ label: [`${LABEL}=${frameId}`] }),
      });
      await Promise.all(
        left.map((c) =>
          docker
            .getContainer(c.Id)
            .remove({ force: true })
            .catch(() => {}),
        ),
      );
      await pruneImages(docker, frameId, new Set());
    },
  };
}
