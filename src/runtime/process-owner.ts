/**
 * The process runtime's record of the containers it runs, for `probelet node`: a file at a
 * path stable across the agent's restarts (named after the node), one `pid start-time` line
 * per running container. A kubelet's containers outlive the kubelet; so do these host
 * processes when the agent is killed (SIGKILL, a crash). The next start of the same node reads
 * the record and kills what is still running (the start time tells a container from a process
 * that reused its pid), then runs the node's pods again: never two copies of a pod.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killProcessTree } from '../spawn/index.js';
import { processStartTime } from './cri/pod-config.js';

/** Where node `name` records its containers: `$TMPDIR/probelet-node-<name>.containers`. */
export function containerRecordPath(node: string): string {
  return join(tmpdir(), `probelet-node-${node}.containers`);
}

export interface ContainerRecordFile {
  /** A container started (its process group leader). */
  add(pid: number): void;
  /** A container exited. */
  remove(pid: number): void;
  /** Nothing runs any more: the record goes. */
  clear(): void;
}

/** Keeps the record at `path` equal to the running containers (rewritten at each start and exit). */
export function openContainerRecord(path: string): ContainerRecordFile {
  const live = new Map<number, string>();
  const write = (): void => {
    writeFileSync(path, [...live].map(([pid, start]) => `${pid} ${start}\n`).join(''));
  };
  return {
    add(pid) {
      live.set(pid, processStartTime(pid));
      write();
    },
    remove(pid) {
      if (live.delete(pid)) write();
    },
    clear() {
      live.clear();
      rmSync(path, { force: true });
    },
  };
}

/**
 * Kills the containers an earlier run of the node left running (those of the record whose
 * pid still has the recorded start time) and removes the record. Returns how many it killed.
 */
export function removeRecordedLeftovers(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 0;
  }
  let killed = 0;
  for (const line of text.split('\n')) {
    const [pidText, start] = line.trim().split(' ');
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 1 || !start) continue;
    if (processStartTime(pid) !== start) continue;
    killProcessTree(pid, 'SIGKILL');
    killed++;
  }
  rmSync(path, { force: true });
  return killed;
}
