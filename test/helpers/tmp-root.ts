/**
 * A vitest global setup: one directory under the system's temporary directory for the whole
 * run, inside which every test file gets its own TMPDIR (private-tmpdir.ts), removed with
 * everything in it when the run ends. A test file whose tests are all skipped runs no
 * afterAll, so its own directory cannot remove itself: without this it stayed behind in /tmp,
 * empty, once per skipped file and run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's directory, parent of every test file's TMPDIR. */
    probeletTmpRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'probelet-test-'));
  project.provide('probeletTmpRoot', root);
  // Whatever a file left was reported by its own afterAll (a failed test); skipped files left empty directories.
  return () => rmSync(root, { recursive: true, force: true });
}
