/**
 * Starves a container of CPU through its cgroup, whatever runtime made it: its CPU cgroup is
 * read from /proc/<pid>/cgroup of one of its processes and given a CFS quota (cgroup v1's
 * `cpu.cfs_quota_us`/`cpu.cfs_period_us`, v2's `cpu.max`). Needs root, as the runtime tests do.
 *
 * What it is for: everything that runs in the container's cgroup slows down — including the
 * runtime's start of an exec'd process (`runc init` joins the cgroup before it execs the
 * command), which a kubelet does not count against an exec probe's timeout.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The CPU cgroup directory of process `pid` (v1's `cpu` controller, else v2's unified one). */
export function cpuCgroupDir(pid: number): string {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  for (const line of lines) {
    const [, controllers = '', path = ''] = line.split(':');
    if (controllers.split(',').includes('cpu')) {
      for (const mount of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) if (existsSync(join(mount, path))) return join(mount, path);
    }
  }
  const unified = lines.find((l) => l.startsWith('0::'))?.slice(3);
  if (unified !== undefined && existsSync(join('/sys/fs/cgroup', unified, 'cpu.max'))) return join('/sys/fs/cgroup', unified);
  throw new Error(`no CPU cgroup found for process ${pid} in /proc/${pid}/cgroup`);
}

/** Limits the cgroup of process `pid` to `quotaUs` of CPU time every `periodUs`. */
export function starveCpu(pid: number, quotaUs: number, periodUs: number): void {
  const dir = cpuCgroupDir(pid);
  if (existsSync(join(dir, 'cpu.max'))) {
    writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${periodUs}`);
    return;
  }
  writeFileSync(join(dir, 'cpu.cfs_period_us'), String(periodUs));
  writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
}
