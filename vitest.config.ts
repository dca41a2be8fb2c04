import { defineConfig } from 'vitest/config';
import { coverage } from './vitest.coverage.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    exclude: [
      'test/browser/**',
      'test/faults/**',
      'test/containers/**',
      'test/edge/**',
      'test/kubernetes/**',
      'node_modules/**',
    ],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
    coverage,
  },
});
