/**
 * Will the run's file descriptors fit under `ulimit -n`? On the process runtime every
 * container holds descriptors in probelet itself (its pipes for output, its pidfd and log
 * file), and every probe holds some while it runs. When they run out, probes cannot open
 * sockets and containers cannot start (issue 21: 400 pods under `ulimit -n 1024` gave ~550
 * start errors, silently). Counted before the run starts, so it is said at once, with how
 * many of the pods would fit.
 *
 * The figures were measured on Linux (`ls /proc/PID/fd` of `probelet run`): 24 with one
 * sleeping container, 4 more for each further container, 3 more for each exec probe in
 * flight (its child's stdin/stdout/stderr… pipes), and a network probe holds its socket.
 */
import type { Container, Pod } from '../../api/types.js';
import { openFilesLimit } from '../../util/fd-limit.js';

/** probelet's own: stdio, the event loop, the API server, the dashboard's files, a margin. */
export const FDS_BASE = 32;
export const FDS_PER_CONTAINER = 4;
export const FDS_PER_EXEC_PROBE = 3;
export const FDS_PER_NETWORK_PROBE = 1;

function containerFds(container: Container): number {
  let fds = FDS_PER_CONTAINER;
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
    if (!probe) continue;
    fds += probe.exec ? FDS_PER_EXEC_PROBE : FDS_PER_NETWORK_PROBE;
  }
  return fds;
}

/**
 * Descriptors one pod holds at most: its app containers and sidecars (restartable init
 * containers) all at once, plus the largest plain init container (they run one at a time).
 */
export function podFds(pod: Pod): number {
  const spec = pod.spec;
  let fds = 0;
  let largestInit = 0;
  for (const c of spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') fds += containerFds(c);
    else largestInit = Math.max(largestInit, containerFds(c));
  }
  for (const c of spec?.containers ?? []) fds += containerFds(c);
  return fds + largestInit;
}

export interface FdVerdict {
  needed: number;
  limit: number;
  hard: number;
  /** How many of the pods, in order, fit under the limit. */
  podsThatFit: number;
}

/** The verdict when the pods need more descriptors than the limit allows; undefined when they fit (or the limit is unknown). */
export function fdShortfall(pods: readonly Pod[], limit = openFilesLimit()): FdVerdict | undefined {
  if (!limit || !Number.isFinite(limit.soft)) return undefined;
  let needed = FDS_BASE;
  let podsThatFit = 0;
  for (const pod of pods) {
    needed += podFds(pod);
    if (needed <= limit.soft) podsThatFit++;
  }
  return needed <= limit.soft ? undefined : { needed, limit: limit.soft, hard: limit.hard, podsThatFit };
}

/** One line for stderr. */
export function fdShortfallMessage(v: FdVerdict, pods: number): string {
  const raise = v.hard > v.limit ? `raise it (ulimit -n ${v.hard})` : `raise the hard limit (${v.hard}; as root: ulimit -Hn, or LimitNOFILE= for a service)`;
  return (
    `probelet: these ${pods} pods need about ${v.needed} file descriptors on the process runtime ` +
    `(${FDS_PER_CONTAINER} a container, ${FDS_PER_EXEC_PROBE} an exec probe, ${FDS_PER_NETWORK_PROBE} a network probe, ${FDS_BASE} for probelet), ` +
    `more than its limit of ${v.limit} (ulimit -n): containers would fail to start and probes would error. ` +
    `${v.podsThatFit} of the ${pods} pods fit; ${raise} or run fewer pods`
  );
}

/**
 * A pod that does not fit, rejected the kubelet's way when a node is over capacity (its
 * `OutOfpods` admission failure: "Node didn't have enough resource: pods, requested: 1,
 * used: N, capacity: N"), the capacity here being the pods that fit under `ulimit -n`.
 */
export function outOfFdsRejection(pod: Pod, v: FdVerdict): string {
  return `pod ${JSON.stringify(pod.metadata?.name ?? '')} rejected (OutOfpods): Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: ${v.podsThatFit}, capacity: ${v.podsThatFit} (the pods whose file descriptors fit under ulimit -n ${v.limit}); it was not started`;
}
