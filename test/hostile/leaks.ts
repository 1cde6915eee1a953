/**
 * What a hostile case must give back: file descriptors (/proc/self/fd), sockets and
 * timers (Node's active resources), child processes, and heap (after a full GC) back near
 * where they were before the case. Resources are polled for a while after the case — a peer
 * may take a moment to see a reset — but must all come back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'vitest';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface Resources {
  fds: number;
  /** Active handles and requests by type (`TCPSocketWrap`, `Timeout`, `ProcessWrap`, …). */
  handles: Record<string, number>;
  children: number;
  heapBytes: number;
}

/** Kinds of active resources a case could leak (requests such as FSReqCallback come and go). */
const WATCHED = ['TCPSocketWrap', 'TCPServerWrap', 'TLSWrap', 'Timeout', 'ProcessWrap', 'PipeWrap', 'Http2Session', 'UDPWrap'];

function childCount(): number {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

export function resources(): Resources {
  gc();
  const handles: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (WATCHED.includes(kind)) handles[kind] = (handles[kind] ?? 0) + 1;
  }
  return { fds: readdirSync('/proc/self/fd').length, handles, children: childCount(), heapBytes: process.memoryUsage().heapUsed };
}

function grew(before: Resources, now: Resources, heapSlackBytes: number): string[] {
  const problems: string[] = [];
  if (now.fds > before.fds) problems.push(`fds ${before.fds} → ${now.fds}`);
  for (const [kind, n] of Object.entries(now.handles)) {
    if (n > (before.handles[kind] ?? 0)) problems.push(`${kind} ${before.handles[kind] ?? 0} → ${n}`);
  }
  if (now.children > before.children) problems.push(`child processes ${before.children} → ${now.children}`);
  if (now.heapBytes > before.heapBytes + heapSlackBytes) {
    problems.push(`heap ${(before.heapBytes / 2 ** 20).toFixed(1)} MiB → ${(now.heapBytes / 2 ** 20).toFixed(1)} MiB`);
  }
  return problems;
}

/** Fails unless everything is back to `before` within `withinMs` (heap: within `heapSlackMiB`). */
export async function expectNothingLeaked(before: Resources, { withinMs = 3000, heapSlackMiB = 8 } = {}): Promise<void> {
  const until = performance.now() + withinMs;
  let problems: string[] = [];
  for (;;) {
    problems = grew(before, resources(), heapSlackMiB * 2 ** 20);
    if (problems.length === 0 || performance.now() > until) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(problems, 'left behind by the case').toEqual([]);
}

/**
 * Runs one hostile case: resources before, the case timed, then the leak check.
 * Returns the case's value and how long it took in milliseconds.
 */
export async function hostileCase<T>(run: () => Promise<T>, options?: { heapSlackMiB?: number }): Promise<{ value: T; ms: number }> {
  const before = resources();
  const start = performance.now();
  const value = await run();
  const ms = performance.now() - start;
  await expectNothingLeaked(before, options);
  return { value, ms };
}
