// Picks the runtime the agent runs frames on (FRAME_RUNTIME, --runtime): `docker` on the Docker
// Engine, `process` for development, or `auto`: docker when an Engine answers, else process,
// with a warning that cannot be missed, since tenants' code then shares the machine's kernel
// without limits.
import { join } from 'node:path';
import type { AgentLog } from '../log.ts';
import { createDockerRuntime, DEFAULT_BASE_IMAGE, DEFAULT_CPUS, DEFAULT_MEMORY_MB, dockerAnswers, dockerClient } from './docker.ts';
import { createProcessRuntime, processSandboxSupport } from './process.ts';
import type { ReplicaRuntime } from './runtime.ts';

export const RUNTIMES = ['auto', 'docker', 'process'] as const;
export type RuntimeChoice = (typeof RUNTIMES)[number];

export interface RuntimeOptions {
  choice: RuntimeChoice;
  dataDir: string;
  /** Directories no app may read besides the agent's own (the service's DATA_DIR for the built-in cloud). */
  hide: string[];
  baseImage?: string;
  memoryMb?: number;
  cpus?: number;
  log: AgentLog;
}

export async function chooseRuntime(o: RuntimeOptions): Promise<ReplicaRuntime> {
  if (o.choice !== 'process') {
    const docker = dockerClient();
    if (await dockerAnswers(docker)) {
      const baseImage = o.baseImage || DEFAULT_BASE_IMAGE;
      o.log.info({ runtime: 'docker', base_image: baseImage, memory_mb: o.memoryMb ?? DEFAULT_MEMORY_MB }, 'frames run in Docker containers');
      return createDockerRuntime({
        docker, baseImage, memoryMb: o.memoryMb ?? DEFAULT_MEMORY_MB, cpus: o.cpus ?? DEFAULT_CPUS, network: 'frameplane-frames',
      });
    }
    if (o.choice === 'docker') throw new Error(`no Docker Engine answers at ${process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock'}`);
  }
  const support = processSandboxSupport();
  const why = support.ok ? 'in a namespace sandbox, without memory or CPU limits' : `UNCONFINED (${support.why})`;
  const level = o.choice === 'auto' || !support.ok ? 'warn' : 'info';
  o.log[level]({ runtime: 'process', sandbox: support.ok },
    `frames run as local processes ${why}: fine for your own code, not for strangers' (start Docker, or set FRAME_RUNTIME=docker)`);
  return createProcessRuntime({
    framesDir: join(o.dataDir, 'frames'), volumesDir: join(o.dataDir, 'volumes'), hide: [o.dataDir, ...o.hide], sandbox: true,
  });
}
