/**
 * A vitest setup file: every test file gets a temporary directory of its own as TMPDIR
 * (inherited by the processes it starts), and fails if anything is left in it at the end.
 * So the suite leaves nothing in /tmp, and a leak is reported by the file that caused it —
 * without racing other files (or other users of /tmp) the way a /tmp listing would.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

const outer = tmpdir();
const own = mkdtempSync(join(outer, 'probelet-test-'));
process.env.TMPDIR = own;

afterAll(() => {
  const left = readdirSync(own);
  process.env.TMPDIR = outer;
  rmSync(own, { recursive: true, force: true });
  expect(left, 'left behind in TMPDIR by this test file').toEqual([]);
});
