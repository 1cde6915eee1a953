import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runNode } from './helpers.js';

describe('bin/probelet.js in a checkout that was not built', () => {
  it('says to run npm ci then npm run build (no node_modules), and exits 2, instead of failing on a missing module', async () => {
    // The executable as a fresh clone has it: bin/ without dist/ beside it.
    const checkout = mkdtempSync(join(tmpdir(), 'checkout-'));
    try {
      mkdirSync(join(checkout, 'bin'));
      copyFileSync(BIN, join(checkout, 'bin', 'probelet.js'));
      const run = await runNode(join(checkout, 'bin', 'probelet.js'), ['--version']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `probelet: ${checkout}/dist/ is missing (a source checkout is not built): run \`npm ci\` then \`npm run build\` in ${checkout}/, then try again\n`,
      );
      // With node_modules (npm ci done), the build alone.
      mkdirSync(join(checkout, 'node_modules', 'typescript'), { recursive: true });
      const installed = await runNode(join(checkout, 'bin', 'probelet.js'), ['--version']);
      expect(installed.stderr).toContain('run `npm run build` in');
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });
});
