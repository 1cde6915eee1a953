/**
 * `mkdir -p` that always ends. Node's `mkdir(path, { recursive: true })` loops forever when a
 * parent exists but will not take the new entry with ENOENT (`/proc/1/nope`: `--log-dir` hung
 * there, issue 21): it retries the parent (EEXIST), then the child (ENOENT) again and again.
 * Here each missing directory is made once, from the top down; the first error is thrown.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

export async function makeDirs(path: string): Promise<void> {
  const missing: string[] = [];
  let at = resolve(path);
  for (;;) {
    try {
      const found = await stat(at);
      if (!found.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(at);
      const parent = dirname(at);
      if (parent === at) break;
      at = parent;
    }
  }
  for (const dir of missing.reverse()) {
    try {
      await mkdir(dir);
    } catch (err) {
      // Made meanwhile by someone else: fine.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
