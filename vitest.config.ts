import { defineConfig } from 'vitest/config';

// Real servers and real processes: keep parallelism modest so timing-sensitive
// tests (timeouts, grace periods) are not starved on a 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each file gets its own TMPDIR and fails if it leaves anything there; all of them live in one
    // directory of the run, removed at its end (with those of skipped files, which run no afterAll).
    globalSetup: ['test/helpers/tmp-root.ts'],
    setupFiles: ['test/helpers/private-tmpdir.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
