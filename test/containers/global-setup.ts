// globalSetup of the container tests: the project's database setup (test/global-setup.ts) and,
// at the same time, a Docker Engine (our own dockerd unless one answers at DOCKER_HOST or
// /var/run/docker.sock) made a swarm manager, with the offline Node.js base image.
// Both teardowns run, the daemon's first; the run fails if the daemon's left the host changed.
import type { TestProject } from 'vitest/node';
import databaseSetup from '../global-setup.ts';
import { ensureSwarm, nodeBaseImage, startDocker, type Docker } from './docker.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dockerHost: string;
    frameBaseImage: string;
  }
}

async function dockerSetup(onStarted: (d: Docker) => void) {
  const t0 = Date.now();
  const docker = await startDocker();
  onStarted(docker);
  const t1 = Date.now();
  await ensureSwarm(docker.host);
  const t2 = Date.now();
  const img = await nodeBaseImage(docker.host);
  console.log(
    `[containers] ${docker.own ? `own dockerd up in ${docker.startMs} ms` : `reused ${docker.host}`} (${t1 - t0} ms);` +
      ` swarm ${t2 - t1} ms; ${img.image} ${img.built ? `built in ${img.buildMs} ms` : 'already there'}, ${(img.sizeBytes / 1e6).toFixed(1)} MB`,
  );
  return { docker, image: img.image };
}

export default async function setup(project: TestProject) {
  let started: Docker | undefined;
  const [db, dk] = await Promise.allSettled([
    databaseSetup(project),
    dockerSetup((d) => {
      started = d;
    }),
  ]);
  if (db.status === 'rejected' || dk.status === 'rejected') {
    await started?.stop().catch((err) => console.error('[docker] stop failed', err));
    if (db.status === 'fulfilled') await db.value();
    throw db.status === 'rejected' ? db.reason : (dk as PromiseRejectedResult).reason;
  }
  const { docker, image } = dk.value;
  project.provide('dockerHost', docker.host);
  project.provide('frameBaseImage', image);
  // For child processes the tests start (the agent, the docker CLI).
  process.env.DOCKER_HOST = docker.host;
  process.env.FRAME_BASE_IMAGE = image;
  return async () => {
    try {
      const t = Date.now();
      await docker.stop();
      console.log(`[containers] docker stopped and cleaned up in ${Date.now() - t} ms`);
    } catch (err) {
      // vitest logs a teardown's error yet exits 0: a host left changed must fail the run.
      process.exitCode = 1;
      throw err;
    } finally {
      await db.value();
    }
  };
}
