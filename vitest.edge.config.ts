import { defineConfig } from 'vitest/config';

// The edge against real outside programs: Pebble (Debian's `pebble`), as ACME server.
export default defineConfig({
  test: {
    include: ['test/edge/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
