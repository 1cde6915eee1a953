import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** The README's library example, run as a user would (`npm test` builds `dist/` first). */
describe('examples/library/readiness.mjs', () => {
  it('shows the pod becoming Ready, then not Ready, and exits by itself', async () => {
    const { stdout } = await run(process.execPath, ['examples/library/readiness.mjs'], { timeout: 20_000 });
    expect(stdout.trim().split('\n')).toEqual(['pod web-uid: Ready=True', 'pod web-uid: Ready=False (ContainersNotReady)']);
  });
});
