// Picks how the agent runs frames (FRAME_RUNTIME, --runtime): `docker` on the Docker Engine,
// `swarm` as services of a Docker Swarm, `process` for development, or `auto`: docker when an
// Engine answers, else process, with a warning that cannot be missed, since tenants' code then
// shares the machine's kernel without limits.
import { join } from 'node:path';
import type { AgentLog } from '../log.ts';
import { FrameRunner } from '../frame-runner.ts';
import type { SupervisorFactory } from '../supervisor.ts';
import {
  createDockerRuntime,
  DEFAULT_BASE_IMAGE,
  DEFAULT_CPUS,
  DEFAULT_MEMORY_MB,
  dockerAnswers,
  dockerClient,
} from './docker.ts';
import { createProcessRuntime, processSandboxSupport } from './process.ts';
import { swarmSupervisor } from './swarm.ts';
import type { ReplicaRuntime } from './runtime.ts';

export const RUNTIMES = ['auto', 'docker', 'swarm', 'process'] as const;
export type RuntimeChoice = (typeof RUNTIMES)[number];

export interface RuntimeOptions {
  choice: RuntimeChoice;
  dataDir: string;
  /** Directories no app may read besides the agent's own (the service's DATA_DIR for the built-in cloud). */
  hide: string[];
  baseImage?: string;
  memoryMb?: number;
  cpus?: number;
  /** swarm: the registry images are pushed to (FRAME_REGISTRY). */
  registry?: string;
  log: AgentLog;
}

export interface ChosenRuntime {
  kind: 'process' | 'docker' | 'swarm';
  supervisor: SupervisorFactory;
}

const onReplicas = (runtime: ReplicaRuntime): ChosenRuntime => ({
  kind: runtime.kind,
  supervisor: (frameId, deps) => new FrameRunner(frameId, { ...deps, runtime }),
});

export async function chooseRuntime(o: RuntimeOptions): Promise<ChosenRuntime> {
  const limits = {
    baseImage: o.baseImage || DEFAULT_BASE_IMAGE,
    memoryMb: o.memoryMb ?? DEFAULT_MEMORY_MB,
    cpus: o.cpus ?? DEFAULT_CPUS,
  };
  if (o.choice !== 'process') {
    const docker = dockerClient();
    if (await dockerAnswers(docker)) {
      if (o.choice === 'swarm') {
        const info = await docker.info();
        if (!info.Swarm?.ControlAvailable) {
          throw new Error(
            'FRAME_RUNTIME=swarm needs a swarm manager (docker swarm init, or DOCKER_HOST of a manager)',
          );
        }
        o.log.info(
          { runtime: 'swarm', nodes: info.Swarm.Nodes, registry: o.registry ?? null, ...limits },
          'frames run as Docker Swarm services',
        );
        if (!o.registry && Number(info.Swarm.Nodes) > 1) {
          o.log.warn('no FRAME_REGISTRY: images exist only on this node, so every task runs here');
        }
        return {
          kind: 'swarm',
          supervisor: swarmSupervisor({ docker, ...limits, registry: o.registry }),
        };
      }
      o.log.info({ runtime: 'docker', ...limits }, 'frames run in Docker containers');
      return onReplicas(createDockerRuntime({ docker, ...limits, network: 'frameplane-frames' }));
    }
    if (o.choice !== 'auto')
      throw new Error(
        `no Docker Engine answers at ${process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock'}`,
      );
  }
  const support = processSandboxSupport();
  const why = support.ok
    ? 'in a namespace sandbox, without memory or CPU limits'
    : `UNCONFINED (${support.why})`;
  const level = o.choice === 'auto' || !support.ok ? 'warn' : 'info';
  o.log[level](
    { runtime: 'process', sandbox: support.ok },
    `frames run as local processes ${why}: fine for your own code, not for strangers' (start Docker, or set FRAME_RUNTIME=docker)`,
  );
  return onReplicas(
    createProcessRuntime({
      framesDir: join(o.dataDir, 'frames'),
      volumesDir: join(o.dataDir, 'volumes'),
      hide: [o.dataDir, ...o.hide],
      sandbox: true,
    }),
  );
}
