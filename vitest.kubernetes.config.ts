import { defineConfig } from 'vitest/config';

// The Kubernetes tests (test/kubernetes): a real one-node Kubernetes 1.20 built from Debian's
// source package, started by the globalSetup inside network, mount and PID namespaces of the
// run's own (test/kubernetes/cluster/in-netns.sh, which `npm run test:kubernetes` goes through).
// Needs root; the first run on a machine builds the binaries before vitest starts (7-10 minutes,
// cached after). Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['test/kubernetes/**/*.test.ts'],
    globalSetup: ['test/kubernetes/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 120_000,
    pool: 'forks',
    // One file at a time: they share one node.
    fileParallelism: false,
    reporters: ['default'],
  },
});
