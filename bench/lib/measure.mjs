/**
 * What a run costs, measured inside the load process over the measured window only:
 * CPU (own, plus reaped children for exec probes), memory, event-loop delay, and the
 * TIME_WAIT sockets the probing side left behind.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { round } from './lateness.mjs';

/** Kernel clock ticks per second (the unit of /proc/<pid>/stat times), usually 100. */
const CLOCK_TICKS = clockTicks();

function clockTicks() {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/**
 * CPU seconds of this process's children: the reaped ones (cutime + cstime, fields 16 and
 * 17 of /proc/self/stat; `process.cpuUsage()` and `resourceUsage()` leave them out, yet an
 * exec probe's cost is mostly the child) plus what the live ones used so far, themselves
 * and their reaped children (a long-lived spawner process reaps the commands it starts, so
 * their cost only reaches our cutime when it exits). A child live at the start and reaped
 * before the end is counted once: its end total minus its start part. 0 where there is no
 * /proc. Resolution: one tick (10 ms).
 */
export function childrenCpuSeconds() {
  const reaped = statFields('self');
  if (reaped === undefined) return 0;
  let ticks = Number(reaped[16 - 3]) + Number(reaped[17 - 3]);
  for (const pid of liveChildren()) {
    const f = statFields(String(pid));
    if (f !== undefined) ticks += Number(f[14 - 3]) + Number(f[15 - 3]) + Number(f[16 - 3]) + Number(f[17 - 3]);
  }
  return ticks / CLOCK_TICKS;
}

/** Peak resident set of this process's live children (a spawner process), in MB. */
export function childrenMaxRssMB() {
  let kib = 0;
  const ownSize = statFields('self')?.[20];
  for (const pid of liveChildren()) {
    // A child started by posix_spawn (CLONE_VM | CLONE_VFORK) shares this process's memory
    // until its exec, and reports this process's peak as its own: not a footprint of its own.
    if (ownSize !== undefined && statFields(pid)?.[20] === ownSize) continue;
    try {
      const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
      kib += Number(match?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return round(kib / 1024, 1);
}

/** Fields of /proc/<pid>/stat from field 3 (state) on; `comm` may hold spaces. */
function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Pids of this process's live children (every thread's `children` list). */
function liveChildren() {
  const pids = new Set();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const text = readFileSync(`/proc/self/task/${tid}/children`, 'latin1').trim();
      for (const pid of text.split(' ')) if (pid !== '') pids.add(Number(pid));
    }
  } catch {
    // no /proc, or no children file: reaped children only
  }
  return pids;
}

/**
 * Sampling interval of the event-loop delay monitor: coarse, so the monitor's own wake-ups
 * (100/s) cost next to nothing. Its histogram records whole intervals between wake-ups, so
 * the resolution is subtracted to get the delay.
 */
const DELAY_RESOLUTION_MS = 10;

/** Measures the window between `start()` and `stop()`. */
export class Window {
  constructor() {
    this.delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
    this.t0 = 0;
    this.cpu0 = process.cpuUsage();
    this.children0 = 0;
  }

  start() {
    this.delay.reset();
    this.delay.enable();
    this.t0 = performance.now();
    this.cpu0 = process.cpuUsage();
    this.children0 = childrenCpuSeconds();
  }

  /** Reads everything at once, so that nothing after the window is charged to it. */
  stop() {
    const cpu = process.cpuUsage(this.cpu0);
    const children = childrenCpuSeconds() - this.children0;
    const elapsedS = (performance.now() - this.t0) / 1000;
    this.delay.disable();
    const heapMB = process.memoryUsage().heapUsed / 2 ** 20;
    return {
      elapsedS: round(elapsedS, 3),
      cpuS: round((cpu.user + cpu.system) / 1e6 + children, 4),
      heapMB: round(heapMB, 1),
      eventLoopDelayP99Ms: round(Math.max(0, this.delay.percentile(99) / 1e6 - DELAY_RESOLUTION_MS), 2),
    };
  }
}

/**
 * Peak resident set of this process so far, plus that of its live children (a spawner
 * process is part of the footprint), in MB (`maxRSS` is in KiB).
 */
export function maxRssMB() {
  return round(process.resourceUsage().maxRSS / 1024 + childrenMaxRssMB(), 1);
}

/**
 * TIME_WAIT sockets (state 06) toward `remotePort` whose local port is not `remotePort`:
 * the probing side's. As "local:port>remote:port" keys, so a run can count only the ones
 * that appeared during it (TIME_WAIT lasts 60 s and would otherwise carry over from the
 * previous run against the same target).
 * @param {number} remotePort
 * @returns {Set<string>}
 */
export function timeWaitKeys(remotePort) {
  const keys = new Set();
  for (const path of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(path, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      if (state !== '06' || local === undefined || remote === undefined) continue;
      const localPort = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
      const peerPort = Number.parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16);
      if (peerPort === remotePort && localPort !== remotePort) keys.add(`${local}>${remote}`);
    }
  }
  return keys;
}

/**
 * @param {Set<string>} before  What {@link timeWaitKeys} returned before the run.
 * @param {number} remotePort
 */
export function newTimeWaitCount(before, remotePort) {
  let n = 0;
  for (const key of timeWaitKeys(remotePort)) if (!before.has(key)) n++;
  return n;
}

/**
 * Now on the monotonic clock in µs: the clock V8 stamps CPU profile samples with on Linux,
 * so a run can tell profile-summary.mjs which samples fall inside its measured window.
 */
export function monotonicUs() {
  return Number(process.hrtime.bigint() / 1000n);
}

/** @param {number} ms */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
