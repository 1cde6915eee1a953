/**
 * `npm run oracle`'s flags are read strictly: `--help` once started a full 10-minute run on the
 * shared cluster, because unknown flags were ignored. Neither case here touches the cluster.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const RUN = fileURLToPath(new URL('./run.mjs', import.meta.url));

it('--help prints the usage and exits 0 without starting a run', () => {
  const r = spawnSync(process.execPath, [RUN, '--help'], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^usage: npm run oracle/);
});

it('an unknown flag is an error naming it, with the usage, exit 2', () => {
  const r = spawnSync(process.execPath, [RUN, '--fats'], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain("Unknown option '--fats'");
  expect(r.stderr).toContain('usage: npm run oracle');
});
