/**
 * A cgroup per command: what lets a host-process runner end a command the way a container
 * runtime ends a container — everything it started, also what detached itself (`setsid`,
 * its parent gone, every pipe redirected), which no process-tree or pipe scan can find.
 *
 * Layout, under the cgroup v2 (unified) hierarchy, below the cgroup probelet runs in:
 *
 *   <own cgroup>/probelet-<pid>-<starttime>-<random>/   this process's, "the run cgroup"
 *                                     <n>/              one per command (exec probe, container)
 *
 * A command's child joins its cgroup itself, between its fork and its exec (native/spawn.c),
 * so everything it starts is inside from the first instruction: a move by the parent after
 * the start loses the race to a shell that forks at once on a busy machine. Node's spawn
 * has no such hook, so the fallback primitive runs commands without a cgroup. Writing `cgroup.kill` (Linux 5.14) SIGKILLs every
 * member. probelet itself never joins one.
 *
 * When probelet dies without cleaning up (SIGKILL, the OOM killer), a supervisor (see
 * supervisor.ts) kills the run cgroup; and each new run cgroup's creator first removes the
 * run cgroups of processes that are gone — the pid and start time in the name prove whose
 * they were, as the CRI runtime's leftover sweep proves its sandboxes by their labels.
 *
 * Where no cgroup v2 hierarchy is writable (not root, cgroup v1 only, Linux before 5.14,
 * `PROBELET_CGROUPS=0`, the native addon not in use), commands run without one and this is said once on stderr: the
 * process-group, session and pipe scans of process.ts still apply.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { realClock } from '../util/clock.js';
import { startSupervisor } from './supervisor.js';

/** A command's cgroup. */
export interface CommandCgroup {
  /** Its `cgroup.procs`: writing a pid there moves that process in. */
  readonly procs: string;
  /** SIGKILL to every process in it (whatever session or parent it has); false when it could not. */
  kill(): boolean;
  /** Kills what is left and removes it (at once when empty, else as soon as its members are gone). */
  release(): void;
}

type Home = { run: string } | { unavailable: string };

let home: Home | undefined;
let sequence = 0;
/** Command cgroups not yet removed: removed at exit. */
const live = new Set<string>();
let warned = false;

/** What is lost without cgroups, said once per process. */
export const NO_CGROUP_GUARANTEE =
  'a process an exec probe or a container detaches (setsid, parent gone, no pipe of the command kept) can outlive them, ' +
  'and containers of the process runtime do not end with probelet when it is killed with SIGKILL or by the OOM killer';

/** Where the run cgroup is, or why there is none (for messages and docs). */
export function cgroupHome(): Home {
  home ??= openHome();
  return home;
}

/** Why the fallback primitive runs commands without a cgroup. */
export const NO_NATIVE_CGROUP = "the native spawn addon is not in use, and Node's spawn cannot start a child inside a cgroup";

/**
 * A new cgroup for one command, or undefined where cgroups are unavailable or `unusable`
 * says why they cannot be used (either said once on stderr), or this one could not be made.
 */
export function openCommandCgroup(unusable?: string): CommandCgroup | undefined {
  const where: Home = unusable === undefined ? cgroupHome() : { unavailable: unusable };
  if ('unavailable' in where) {
    if (!warned) {
      warned = true;
      process.stderr.write(`probelet: no cgroup for commands (${where.unavailable}): ${NO_CGROUP_GUARANTEE}\n`);
    }
    return undefined;
  }
  const dir = join(where.run, String(++sequence));
  try {
    mkdirSync(dir);
  } catch {
    return undefined;
  }
  live.add(dir);
  const kill = (): boolean => killCgroup(dir);
  return {
    procs: join(dir, 'cgroup.procs'),
    kill,
    release: () => removeWhenEmpty(dir, RELEASE_TRIES),
  };
}

/** How often (every RELEASE_STEP_MS) a killed cgroup's removal is tried before it is left to exit's cleanup. */
const RELEASE_TRIES = 100;
const RELEASE_STEP_MS = 10;

function killCgroup(dir: string): boolean {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    // Gone already, or never populated.
    return false;
  }
}

/** Empty: removed now. Not empty: killed, and removed once the kernel has let its members go. */
function removeWhenEmpty(dir: string, tries: number): void {
  try {
    rmdirSync(dir);
    live.delete(dir);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      live.delete(dir);
      return;
    }
  }
  killCgroup(dir);
  if (tries <= 0) return;
  // Real time: this waits on the kernel, not on anything the caller's clock models.
  const timer = realClock.setTimeout(() => removeWhenEmpty(dir, tries - 1), RELEASE_STEP_MS);
  (timer as { unref?: () => void }).unref?.();
}

/**
 * A process's identity, `<pid>-<start time>` (clock ticks since boot): what proves that a
 * leftover named with it belonged to a process that is gone, even after its pid was reused.
 */
export function processIdentity(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 22 of stat is the start time; after the command name the fields start at 3.
    return `${pid}-${fields[19] ?? ''}`;
  } catch {
    return undefined;
  }
}

function openHome(): Home {
  if (process.env.PROBELET_CGROUPS === '0') return { unavailable: 'PROBELET_CGROUPS=0' };
  if (process.platform !== 'linux') return { unavailable: `not Linux but ${process.platform}` };
  const base = ownUnifiedCgroup();
  if ('unavailable' in base) return base;
  const me = processIdentity(process.pid);
  if (me === undefined) return { unavailable: 'cannot read /proc/self/stat' };
  const run = join(base.dir, `probelet-${me}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(run);
  } catch (err) {
    return { unavailable: `cannot create a cgroup in ${base.dir}: ${(err as Error).message}` };
  }
  if (!existsSync(join(run, 'cgroup.kill'))) {
    tryRmdir(run);
    return { unavailable: 'the kernel has no cgroup.kill (Linux 5.14 or later needed)' };
  }
  removeLeftovers(base.dir);
  process.on('exit', () => cleanUpAtExit(run));
  startSupervisor(run);
  return { run };
}

/** The directory of this process's own cgroup in the cgroup2 hierarchy, found through /proc. */
function ownUnifiedCgroup(): { dir: string } | { unavailable: string } {
  let mountinfo: string;
  let cgroups: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    cgroups = readFileSync('/proc/self/cgroup', 'utf8');
  } catch (err) {
    return { unavailable: `cannot read /proc: ${(err as Error).message}` };
  }
  // "0::/path": the unified hierarchy's entry (hybrid hosts list the v1 ones as well).
  const own = cgroups.split('\n').find((line) => line.startsWith('0::'))?.slice(3);
  if (own === undefined) return { unavailable: 'no cgroup v2 (unified) hierarchy' };
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right?.split(' ')[0] !== 'cgroup2' || left === undefined) continue;
    const fields = left.split(' ');
    const root = fields[3] ?? '/';
    const point = unescapeMount(fields[4] ?? '');
    // Under a cgroup namespace the mount's root is where paths start.
    const relative = root === '/' ? own : own.startsWith(root) ? own.slice(root.length) : undefined;
    if (relative === undefined) continue;
    return { dir: join(point, relative) };
  }
  return { unavailable: 'no cgroup2 file system mounted' };
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Run cgroups of processes that are gone (their pid is free, or taken by a process that
 * started at another time): what a probelet killed with SIGKILL left when its supervisor
 * could not finish. Everything in them is killed and they are removed.
 */
function removeLeftovers(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^probelet-(\d+)-(\d+)-[0-9a-f]+$/.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (processIdentity(pid) === `${pid}-${match[2] ?? ''}`) continue; // its owner still runs
    const dir = join(base, name);
    killCgroup(dir);
    removeTree(dir);
  }
}

/** Removes a cgroup and the cgroups below it (children first); what is still busy stays. */
function removeTree(dir: string): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const entry of entries) removeTree(join(dir, entry));
  tryRmdir(dir);
}

function tryRmdir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Busy (members still exiting) or gone: the supervisor or the next run's sweep finishes.
  }
}

/** At exit: kill and remove what is left; the supervisor removes what is still busy. */
function cleanUpAtExit(run: string): void {
  for (const dir of live) killCgroup(dir);
  for (const dir of live) tryRmdir(dir);
  tryRmdir(run);
}
