/**
 * Leak checks for tests that start real processes: read the process table from /proc
 * and answer "is anything of this run still alive?".
 *
 * Tag a run by giving it an environment variable with a unique value (see
 * {@link markerEnv}); every descendant inherits it, whatever group or session it moves to,
 * so {@link aliveWithMarker} finds stragglers no matter how they escaped.
 *
 * Zombies count as dead: in some sandboxes PID 1 never reaps orphans, so a killed orphan
 * stays a zombie forever although nothing of it runs.
 */
import { afterEach } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  cmdline: string;
}

const MARKER_VAR = 'PROBELET_TEST_MARKER';

/** A fresh marker and the environment (this process's plus the marker) that carries it. */
export function markerEnv(): { marker: string; env: Record<string, string> } {
  const marker = `probelet-test-${randomUUID()}`;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  env[MARKER_VAR] = marker;
  return { marker, env };
}

/** Every process readable in /proc that is not a zombie. */
export function liveProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = readProc(Number(name));
    if (info && info.state !== 'Z' && info.state !== 'X') out.push(info);
  }
  return out;
}

/** Live processes whose environment carries `marker` (see {@link markerEnv}). */
export function aliveWithMarker(marker: string): ProcInfo[] {
  const needle = `${MARKER_VAR}=${marker}`;
  return liveProcesses().filter((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0').includes(needle);
    } catch {
      return false;
    }
  });
}

/** Live processes of process group `pgid`. */
export function aliveInGroup(pgid: number): ProcInfo[] {
  return liveProcesses().filter((p) => p.pgid === pgid);
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const info = readProc(pid);
  return info !== undefined && info.state !== 'Z' && info.state !== 'X';
}

/** Polls `check` (real time) until it returns true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => boolean, timeoutMs = 5000, stepMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/** Kills (SIGKILL) every live process carrying `marker`: a test's last-resort cleanup. */
export function killMarked(marker: string): void {
  for (const p of aliveWithMarker(marker)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
    return {
      pid,
      state: fields[0] ?? '?',
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
      cmdline,
    };
  } catch {
    return undefined;
  }
}

/**
 * Tags each process a test starts (`tagged()` gives a marker and the env that carries it)
 * and kills whatever still carries a marker after each test, so one leak cannot spill into
 * the next test. Call it at the top level of a test file.
 */
export function useProcessMarkers(): () => { marker: string; env: Record<string, string> } {
  const markers: string[] = [];
  afterEach(() => {
    for (const marker of markers.splice(0)) killMarked(marker);
  });
  return () => {
    const tag = markerEnv();
    markers.push(tag.marker);
    return tag;
  };
}
