/**
 * A run's temporary directory must not outlive a probelet that was killed (SIGKILL, OOM).
 * The supervisor removes it when probelet's pipe closes; when the supervisor was killed too,
 * the next run removes it, proven ours and orphaned by an owner file naming the process that
 * made it (pid and start time, see cgroup.ts's processIdentity, and the host name: a /tmp
 * shared with a container of another pid namespace proves nothing), which a run removes when it
 * deals with the directory itself (removing it, or keeping it on purpose).
 */
import { readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { cgroupHome, processIdentity } from './cgroup.js';
import { releaseDirectory, superviseDirectory } from './supervisor.js';

/** The owner file in a run directory, there only while the run that made it may still remove it. */
export const RUN_OWNER_FILE = '.probelet-owner';

/** `dir` is this process's until {@link releaseRunDirectory}: removed if it dies before. */
export function claimRunDirectory(dir: string): void {
  const me = processIdentity(process.pid);
  if (me !== undefined) {
    try {
      writeFileSync(join(dir, RUN_OWNER_FILE), `${me} ${hostname()}\n`);
    } catch {
      // Unwritable: only the next run's sweep is lost; the supervisor still removes it.
    }
  }
  if ('run' in cgroupHome()) superviseDirectory(dir);
}

/** This process dealt with `dir` itself (removed it, or keeps it with the logs). */
export function releaseRunDirectory(dir: string): void {
  releaseDirectory();
  try {
    unlinkSync(join(dir, RUN_OWNER_FILE));
  } catch {
    // Already gone with the directory.
  }
}

/**
 * Removes the directories `<parent>/<prefix>*` whose owner file names a process that no
 * longer runs. A directory without an owner file (kept on purpose, or not ours) is left.
 */
export function removeOrphanedRunDirectories(parent: string, prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(parent, name);
    let owner: string;
    try {
      owner = readFileSync(join(dir, RUN_OWNER_FILE), 'utf8').trim();
    } catch {
      continue;
    }
    // Another host's (a /tmp shared with a container, another pid namespace): not provably dead.
    const [identity = '', host] = owner.split(' ');
    if (host !== hostname()) continue;
    const pid = Number(identity.split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processIdentity(pid) === identity) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}
