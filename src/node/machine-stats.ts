/**
 * What the kubelet's eviction manager reads from cAdvisor and its own rlimit stats to decide
 * the node's pressure conditions, read here from the machine: memory from `/proc/meminfo`,
 * the node filesystem (and the image filesystem) with statfs of the node's run directory, and
 * the task limit and count as `pkg/kubelet/stats/pidlimit` reads them. This is the seam tests
 * fake, as the kubelet's tests fake cAdvisor.
 */
import { readFileSync, statfsSync } from 'node:fs';

/** Bytes and inodes of one filesystem (statsapi.FsStats, the fields eviction reads). */
export interface FsStats {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

/** The eviction signals' sources (statsapi.Summary's node part, trimmed); a missing one is no observation. */
export interface MachineStats {
  /** `memory.available` = capacity − working set. */
  memory?: { capacityBytes: number; availableBytes: number };
  /** The filesystem of the kubelet's root and logs (`nodefs`). */
  nodeFs?: FsStats;
  /** The filesystem of the runtime's images (`imagefs`); the node's own when they share one. */
  imageFs?: FsStats;
  /** `pid.available` = maxPID − running tasks. */
  rlimit?: { maxPID: number; processes: number };
}

/** Where {@link readMachineStats} reads; tests point it at files of their own. */
export interface MachinePaths {
  /** A directory on the node filesystem (the node's run directory, where pod logs go). */
  nodeDir: string;
  /** A directory on the image filesystem; default `nodeDir` (one filesystem, as on most nodes). */
  imageDir?: string;
  proc?: string;
}

/**
 * Reads the machine's stats; what cannot be read is left out (the kubelet then has no
 * observation of that signal and reports no pressure for it).
 */
export function readMachineStats(paths: MachinePaths): MachineStats {
  const proc = paths.proc ?? '/proc';
  const stats: MachineStats = {};
  const memory = memoryStats(readText(`${proc}/meminfo`));
  if (memory) stats.memory = memory;
  const nodeFs = fsStats(paths.nodeDir);
  if (nodeFs) stats.nodeFs = nodeFs;
  const imageFs = paths.imageDir === undefined ? nodeFs : fsStats(paths.imageDir);
  if (imageFs) stats.imageFs = imageFs;
  const rlimit = rlimitStats(readText(`${proc}/sys/kernel/pid_max`), readText(`${proc}/sys/kernel/threads-max`), readText(`${proc}/loadavg`));
  if (rlimit) stats.rlimit = rlimit;
  return stats;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * `memory.available` as the eviction documentation computes it for the node: capacity minus
 * the working set, the working set being usage (MemTotal − MemFree) minus inactive file pages,
 * i.e. MemFree + Inactive(file).
 */
export function memoryStats(meminfo: string): MachineStats['memory'] {
  const fields = new Map<string, number>();
  for (const line of meminfo.split('\n')) {
    const colon = line.indexOf(':');
    const [value, unit] = line.slice(colon + 1).trim().split(' ');
    if (colon > 0 && unit === 'kB' && value !== undefined && /^\d+$/.test(value)) fields.set(line.slice(0, colon), Number(value) * 1024);
  }
  const kib = (key: string): number | undefined => fields.get(key);
  const total = kib('MemTotal');
  const free = kib('MemFree');
  if (total === undefined || free === undefined) return undefined;
  const inactiveFile = kib('Inactive(file)') ?? 0;
  return { capacityBytes: total, availableBytes: Math.min(total, free + inactiveFile) };
}

function fsStats(dir: string): FsStats | undefined {
  try {
    const s = statfsSync(dir);
    return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
  } catch {
    return undefined;
  }
}

/**
 * pidlimit.Stats: the task limit is the smaller of kernel.pid_max and kernel.threads-max; the
 * running tasks the fourth field of /proc/loadavg (`2/3518`: 3518).
 */
export function rlimitStats(pidMax: string, threadsMax: string, loadavg: string): MachineStats['rlimit'] {
  const limits = [pidMax, threadsMax].map((t) => Number.parseInt(t.trim(), 10)).filter((n) => Number.isInteger(n) && n >= 0);
  const tasks = Number(loadavg.trim().split(/\s+/)[3]?.split('/')[1]);
  if (limits.length === 0 || !Number.isInteger(tasks)) return undefined;
  return { maxPID: Math.min(...limits), processes: tasks };
}
