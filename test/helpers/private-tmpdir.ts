/**
 * A vitest setup file: every test file gets a temporary directory of its own as TMPDIR
 * (inherited by the processes it starts), and fails if anything is left in it at the end.
 * So the suite leaves nothing in /tmp, and a leak is reported by the file that caused it —
 * without racing other files (or other users of /tmp) the way a /tmp listing would.
 * The directory is made inside the run's own (tmp-root.ts), which is removed when the run
 * ends: a file whose tests are all skipped runs no afterAll.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, inject } from 'vitest';

const outer = tmpdir();
// Inside the run's directory (tmp-root.ts), which takes along the directories of skipped files.
const own = mkdtempSync(join(inject('probeletTmpRoot'), 'file-'));
process.env.TMPDIR = own;

afterAll(() => {
  const left = readdirSync(own);
  process.env.TMPDIR = outer;
  rmSync(own, { recursive: true, force: true });
  expect(left, 'left behind in TMPDIR by this test file').toEqual([]);
});
