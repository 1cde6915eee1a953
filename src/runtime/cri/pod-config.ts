/**
 * What the kubelet's `generatePodSandboxConfig` and `generateContainerConfig` put in the
 * CRI requests, for the fields probelet supports: pod identity, labels and annotations
 * (plus the `io.kubernetes.*` labels crictl shows), host or pod namespaces, DNS, the log
 * directory layout `<runDir>/<namespace>_<pod>_<uid>/<container>/<attempt>.log`, and the
 * container's command, args (each `$(VAR)`-expanded on its own, so an image ENTRYPOINT
 * still receives the args), env and working directory.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Container, Pod } from '../../api/types.js';
import { expandCommandLine } from '../env.js';
import { containerLogPath } from '../logs.js';
import type { ContainerConfig, DNSConfig, Labels, NamespaceMode, NamespaceOptions, PodSandboxConfig } from './types.js';

/** Carried by every sandbox and container probelet creates; leftovers are found by it. */
export const MANAGED_LABEL = 'probelet.dev/managed';
/** The run (one runtime instance) that created it. */
export const RUN_LABEL = 'probelet.dev/run';
/** The node a `probelet node` agent runs them for: stable across its restarts (`crictl pods --label probelet.dev/node=NAME`). */
export const NODE_LABEL = 'probelet.dev/node';
/** The PID of the probelet process that created it: a leftover is one whose process is gone. */
export const PID_LABEL = 'probelet.dev/pid';
/**
 * When that process started (`/proc/<pid>/stat` field 22, clock ticks since boot): a PID is
 * reused after its process ends, and a new process under the old PID must not keep a dead
 * run's pods alive for ever.
 */
export const PID_START_LABEL = 'probelet.dev/pid-start';
/** The pod UID label the kubelet puts on sandboxes and containers (kuberuntime labels.go). */
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
/** Where the kubelet keeps a container's restart count in the runtime (kuberuntime labels.go), read back after a restart. */
export const RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';

export interface Owner {
  runID: string;
  pid: number;
  /** The process's start time as PID_START_LABEL holds it ('' when /proc cannot tell). */
  pidStart: string;
  /** The node name of a `probelet node` agent (none for `probelet run`). */
  node?: string;
}

export function ownerLabels(owner: Owner): Labels {
  return { [MANAGED_LABEL]: 'true', [RUN_LABEL]: owner.runID, [PID_LABEL]: String(owner.pid), ...(owner.pidStart ? { [PID_START_LABEL]: owner.pidStart } : {}), ...(owner.node ? { [NODE_LABEL]: owner.node } : {}) };
}

/** Field 22 of `/proc/<pid>/stat` (after the `(comm)` that may itself hold spaces and parentheses); '' when unreadable. */
export function processStartTime(pid: number): string {
  try {
    return startTimeFromStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return '';
  }
}

export function startTimeFromStat(stat: string): string {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

function podRef(pod: Pod): { namespace: string; name: string; uid: string } {
  const meta = pod.metadata ?? {};
  return { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: meta.uid ?? '' };
}

/** The pod's log directory (CRI `log_directory`). */
export function podLogDirectory(runDir: string, pod: Pod): string {
  return dirname(dirname(containerLogPath(runDir, podRef(pod), 'c', 0)));
}

/**
 * The pod's namespaces, the same for its sandbox and each of its containers, as the kubelet's
 * `NamespacesForPod` (pkg/kubelet/kuberuntime/util/util.go) gives them to both: a container has a PID
 * namespace of its own (its process is PID 1) unless `shareProcessNamespace`.
 */
export function namespaceOptions(pod: Pod): NamespaceOptions {
  const spec = pod.spec;
  const ns = (host: boolean | undefined, otherwise: NamespaceMode): NamespaceMode => (host === true ? 'NODE' : otherwise);
  return {
    network: ns(spec?.hostNetwork, 'POD'),
    pid: ns(spec?.hostPID, spec?.shareProcessNamespace === true ? 'POD' : 'CONTAINER'),
    ipc: ns(spec?.hostIPC, 'POD'),
  };
}

export function podSandboxConfig(pod: Pod, runDir: string, owner: Owner, resolvConf = '/etc/resolv.conf'): PodSandboxConfig {
  const ref = podRef(pod);
  const spec = pod.spec;
  const hostNetwork = spec?.hostNetwork === true;
  const config: PodSandboxConfig = {
    metadata: { name: ref.name, uid: ref.uid, namespace: ref.namespace, attempt: 0 },
    log_directory: podLogDirectory(runDir, pod),
    labels: {
      ...(pod.metadata?.labels ?? {}),
      'io.kubernetes.pod.name': ref.name,
      'io.kubernetes.pod.namespace': ref.namespace,
      'io.kubernetes.pod.uid': ref.uid,
      ...ownerLabels(owner),
    },
    annotations: { ...(pod.metadata?.annotations ?? {}) },
    linux: {
      security_context: { namespace_options: namespaceOptions(pod) },
    },
  };
  // A host-network sandbox shares the node's UTS namespace: runc refuses to set a hostname there.
  if (!hostNetwork) config.hostname = (spec?.hostname || ref.name).slice(0, 63);
  const dns = dnsConfig(pod, resolvConf);
  if (dns) config.dns_config = dns;
  return config;
}

/**
 * `ClusterFirst` without a cluster DNS falls back to `Default` (the node's resolv.conf), as
 * the kubelet does when it has no `clusterDNS`; `None` uses only `spec.dnsConfig`, which is
 * otherwise appended.
 */
export function dnsConfig(pod: Pod, resolvConf: string): DNSConfig | undefined {
  const extra = pod.spec?.dnsConfig;
  const base: DNSConfig = { servers: [], searches: [], options: [] };
  if (pod.spec?.dnsPolicy !== 'None') {
    let text = '';
    try {
      text = readFileSync(resolvConf, 'utf8');
    } catch {
      // No resolv.conf on the node: the runtime's default applies.
    }
    for (const line of text.split('\n')) {
      const [key, ...values] = line.trim().split(/\s+/);
      if (key === 'nameserver') base.servers.push(...values.slice(0, 1));
      else if (key === 'search') base.searches.push(...values);
      else if (key === 'options') base.options.push(...values);
    }
  }
  base.servers.push(...(extra?.nameservers ?? []));
  base.searches.push(...(extra?.searches ?? []));
  base.options.push(...(extra?.options ?? []).map((o) => (o.value === undefined ? o.name ?? '' : `${o.name ?? ''}:${o.value}`)));
  if (base.servers.length + base.searches.length + base.options.length === 0) return undefined;
  return base;
}

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  attempt: number;
  /** The resolved `env` entries (kubelet order). */
  env: ReadonlyMap<string, string>;
  runDir: string;
  owner: Owner;
}

export function containerConfig(input: ContainerConfigInput): ContainerConfig {
  const { pod, container, attempt, env, runDir, owner } = input;
  const ref = podRef(pod);
  const logPath = containerLogPath(runDir, ref, container.name, attempt);
  return {
    metadata: { name: container.name, attempt },
    image: { image: container.image ?? '' },
    command: expandCommandLine({ name: container.name, command: container.command ?? [] }, env),
    args: expandCommandLine({ name: container.name, args: container.args ?? [] }, env),
    working_dir: container.workingDir ?? '',
    envs: [...env].map(([key, value]) => ({ key, value })),
    labels: {
      'io.kubernetes.container.name': container.name,
      'io.kubernetes.pod.name': ref.name,
      'io.kubernetes.pod.namespace': ref.namespace,
      'io.kubernetes.pod.uid': ref.uid,
      ...ownerLabels(owner),
    },
    annotations: { [RESTART_COUNT_ANNOTATION]: String(attempt) },
    log_path: relative(podLogDirectory(runDir, pod), logPath),
    // Found by the oracle: without it a container's process was not PID 1 (pause was), so a
    // shell ignoring SIGTERM as PID 1 on the kubelet died of it here (exit 143, not 137).
    linux: { security_context: { namespace_options: namespaceOptions(pod) } },
  };
}
