// Headless-browser tests (npm run test:browser): the real app on a TCP port, driven by Debian's
// Chromium through playwright-core. Kept apart from `npm test` because they need a browser.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One browser at a time: Chromium is heavy and the files share nothing.
    fileParallelism: false,
    reporters: ['default'],
  },
});
