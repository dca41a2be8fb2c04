import { defineConfig } from 'vitest/config';

// The container tests (test/containers): apps in Docker containers and swarm services on a real
// Docker Engine. The globalSetup starts its own dockerd (unless one answers at DOCKER_HOST or
// /var/run/docker.sock), builds the Node.js base image offline, and removes all of it afterwards.
// Needs root, Debian's docker.io and busybox-static. Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['test/containers/**/*.test.ts'],
    globalSetup: ['test/containers/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 120_000,
    pool: 'forks',
    // One file at a time: they share one daemon, one swarm, and the host's ports.
    fileParallelism: false,
    reporters: ['default'],
  },
});
