/**
 * Which labelled sandboxes and containers a runtime removes when it starts, shared by the CRI
 * and Docker runtimes. What probelet creates carries its owner's labels (cri/pod-config.ts);
 * a leftover is what a probelet process that is gone (a SIGKILL, a crash) made. A `run`'s
 * leftovers go at the next start on the same runtime; a node's are kept for that node, which
 * takes them over when it starts again (as a kubelet finds its pods after a restart), so
 * neither a `run` nor another node removes them meanwhile.
 */
import { NODE_LABEL, PID_LABEL, PID_START_LABEL, processStartTime } from './cri/pod-config.js';

/** Whether the probelet process that created it still runs: its PID is alive and, when recorded, started when it did. */
export function ownerAlive(labels: Readonly<Record<string, string>>): boolean {
  const pid = Number(labels[PID_LABEL]);
  if (!processAlive(pid)) return false;
  const start = labels[PID_START_LABEL];
  return start === undefined || start === '' || processStartTime(pid) === start;
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a runtime of `node` (none for `probelet run`) removes this at start: its owner is
 * gone, and it is no node's, or this node's when this node does not adopt.
 */
export function removedAtStart(labels: Readonly<Record<string, string>>, self: { node?: string | undefined; adopt: boolean }): boolean {
  if (ownerAlive(labels)) return false;
  const node = labels[NODE_LABEL];
  if (node === undefined) return true;
  return node === self.node && !self.adopt;
}
