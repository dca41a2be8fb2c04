// Picks how the agent runs frames (FRAME_RUNTIME, --runtime): `docker` on the Docker Engine,
// `swarm` as services of a Docker Swarm, `kubernetes` as Deployments of a cluster (images built
// by the Docker Engine), `process` for development, or `auto`: docker when an
// Engine answers, else process, with a warning that cannot be missed, since tenants' code then
// shares the machine's kernel. An agent that runs strangers' code (the built-in cloud of a
// service anyone may sign up to) never falls back to process by itself: its frames are refused,
// saying why, until the operator starts Docker or chooses FRAME_RUNTIME=process knowingly.
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
import { swarmSupervisor } from './swarm/frame.ts';
import { kubernetesRuntime } from './kubernetes/runtime.ts';
import type { ReplicaRuntime } from './runtime.ts';
import { refusingSupervisor } from './refuse.ts';
import type { AllowRule } from '../egress-policy.ts';

/** Why an agent for strangers runs nothing without Docker; shown on each refused deployment. */
export const STRANGERS_REFUSED =
  'this service runs apps only in containers, and no Docker Engine answers on its agent ' +
  '(the operator can start Docker, or set FRAME_RUNTIME=process to run apps as local processes)';

export const RUNTIMES = ['auto', 'docker', 'swarm', 'kubernetes', 'process'] as const;
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
  /** Addresses the process runtime's builds may reach besides public ones (BUILD_EGRESS_ALLOW). */
  egressAllow?: AllowRule[];
  /** Strangers' code runs here: `auto` must not fall back to the process runtime. */
  strangers?: boolean;
  log: AgentLog;
}

export interface ChosenRuntime {
  /** `none`: frames are refused (refuse.ts). */
  kind: 'process' | 'docker' | 'swarm' | 'kubernetes' | 'none';
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
      if (o.choice === 'kubernetes') {
        const supervisor = await kubernetesRuntime({ ...o, docker, ...limits });
        return { kind: 'kubernetes', supervisor };
      }
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
  if (o.choice === 'auto' && o.strangers) {
    const why = STRANGERS_REFUSED;
    o.log.error({ runtime: 'none' }, `no Docker Engine answers: ${why}`);
    return { kind: 'none', supervisor: refusingSupervisor(why) };
  }
  const support = processSandboxSupport();
  if (!support.ok && process.getuid?.() === 0) {
    // Without its sandbox, an app would run as root on the host, or as a uid that cannot
    // reach its own checkout inside the agent's 0700 directory: neither runs anything.
    const why = `apps are never run unconfined as root, and the sandbox cannot be made here (${support.why})`;
    o.log.error({ runtime: 'none' }, why);
    return { kind: 'none', supervisor: refusingSupervisor(why) };
  }
  const how = support.ok ? 'in a namespace sandbox' : `UNCONFINED (${support.why})`;
  const level = o.choice === 'auto' || !support.ok ? 'warn' : 'info';
  o.log[level](
    { runtime: 'process', sandbox: support.ok },
    `frames run as local processes ${how}: fine for your own code; for strangers', start Docker (or set FRAME_RUNTIME=docker)`,
  );
  return onReplicas(
    createProcessRuntime({
      framesDir: join(o.dataDir, 'frames'),
      volumesDir: join(o.dataDir, 'volumes'),
      hide: [o.dataDir, ...o.hide],
      sandbox: true,
      limits: { memoryMb: limits.memoryMb, cpus: limits.cpus },
      egressAllow: o.egressAllow ?? [],
      log: o.log,
    }),
  );
}
