// globalSetup of the Kubernetes tests (vitest.kubernetes.config.ts): the project's database
// setup (test/global-setup.ts) and, at the same time, a one-node Kubernetes 1.20 (cluster/)
// started inside the namespaces of cluster/in-netns.sh (which has made sure of the binaries),
// with the offline Node.js base image imported into its dockerd.
// Tests read inject('kubeconfig'), inject('dockerHost'), inject('frameBaseImage'); child
// processes get KUBECONFIG, DOCKER_HOST and FRAME_BASE_IMAGE. Both teardowns run, the cluster's
// first; the run fails if stop.sh could not clean up.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import databaseSetup from '../global-setup.ts';
import { nodeBaseImage } from '../containers/docker.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    dockerHost: string;
    frameBaseImage: string;
  }
}

const DIR = fileURLToPath(new URL('./cluster/', import.meta.url));

/** Runs start.sh or stop.sh, its output shown as is. */
function script(name: string) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(`${DIR}${name}`, [], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${name} exited with ${code}`)),
    );
  });
}

interface Cluster {
  kubeconfig: string;
  dockerHost: string;
  image: string;
}

async function clusterSetup(onStarted: () => void): Promise<Cluster> {
  const run = process.env.FRAMEPLANE_K8S_RUN;
  if (process.env.FRAMEPLANE_K8S_NETNS !== 'inside' || !run)
    throw new Error('the Kubernetes tests run in cluster/in-netns.sh: use npm run test:kubernetes');
  const t0 = Date.now();
  onStarted();
  await script('start.sh');
  const t1 = Date.now();
  const dockerHost = `unix://${run}/docker.sock`;
  const img = await nodeBaseImage(dockerHost);
  console.log(
    `[k8s] cluster up in ${t1 - t0} ms; ${img.image} imported in ${img.buildMs} ms,` +
      ` ${(img.sizeBytes / 1e6).toFixed(1)} MB`,
  );
  return { kubeconfig: `${run}/kubeconfig`, dockerHost, image: img.image };
}

async function stopCluster(): Promise<void> {
  const t = Date.now();
  await script('stop.sh');
  console.log(`[k8s] cluster stopped and cleaned up in ${Date.now() - t} ms`);
}

export default async function setup(project: TestProject) {
  // A PostgreSQL server of the host is out of reach from the run's network namespace.
  delete process.env.DATABASE_URL;
  let started = false;
  const [db, k8s] = await Promise.allSettled([
    databaseSetup(project),
    clusterSetup(() => {
      started = true;
    }),
  ]);
  if (db.status === 'rejected' || k8s.status === 'rejected') {
    if (started) await stopCluster().catch((err) => console.error('[k8s] stop failed', err));
    if (db.status === 'fulfilled') await db.value();
    throw db.status === 'rejected' ? db.reason : (k8s as PromiseRejectedResult).reason;
  }
  const { kubeconfig, dockerHost, image } = k8s.value;
  project.provide('kubeconfig', kubeconfig);
  project.provide('dockerHost', dockerHost);
  project.provide('frameBaseImage', image);
  // For the tests' own clients (KubeConfig.loadFromDefault) and child processes (the agent).
  process.env.KUBECONFIG = kubeconfig;
  process.env.DOCKER_HOST = dockerHost;
  process.env.FRAME_BASE_IMAGE = image;
  return async () => {
    try {
      await stopCluster();
    } catch (err) {
      // vitest logs a teardown's error yet exits 0: a host left changed must fail the run.
      process.exitCode = 1;
      throw err;
    } finally {
      await db.value();
    }
  };
}
