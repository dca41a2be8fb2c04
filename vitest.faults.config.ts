import { defineConfig } from 'vitest/config';

// The resilience tests (test/faults): real child processes, a PostgreSQL restarted under
// load, SIGKILL during delivery, two instances. Slow by nature, so not part of `npm test`.
// The in-process security and fuzz tests live in test/security and run in `npm test`.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // One file at a time: they start processes and stop databases, and their timings are figures.
    fileParallelism: false,
    reporters: ['default'],
  },
});
