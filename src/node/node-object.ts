/**
 * The Node object a probelet node registers and the status it reports, as the kubelet's
 * `initialNode` and node status setters (`pkg/kubelet/kubelet_node_status.go`,
 * `pkg/kubelet/nodestatus/setters.go`) build them: the standard labels, addresses,
 * capacity and allocatable, `nodeInfo`, the four conditions with the kubelet's reasons and
 * messages, and `daemonEndpoints` naming the read-only port.
 */
import { readFileSync } from 'node:fs';
import { arch, cpus, networkInterfaces, release, totalmem } from 'node:os';
import type { Node, NodeCondition, NodeStatus, Taint } from 'kubernetes-types/core/v1.js';
import { KUBE_VERSION } from '../probe/constants.js';
import type { PressureCondition } from './eviction.js';
import { aggregateMessage } from './runtime-state.js';

/** The kubelet's default `maxPods`. */
export const DEFAULT_MAX_PODS = 110;

export interface NodeIdentity {
  name: string;
  /** `nodeInfo.containerRuntimeVersion`, e.g. `probelet-process://0.1.0`. */
  runtimeVersion: string;
  /** probelet's own version: it goes into `nodeInfo.kubeletVersion` after the Kubernetes version it follows. */
  probeletVersion: string;
  /** The read-only API's port (`daemonEndpoints.kubeletEndpoint.Port`); 0 when none is served. */
  port: number;
  /** The node's IP as the cluster sees it (`InternalIP`), and its pods' (they share the host's network). */
  address: string;
  taints?: Taint[];
  labels?: Record<string, string>;
  capacity?: Partial<Record<'cpu' | 'memory' | 'pods', string>>;
}

/**
 * The node's address when none is given: the first non-internal IPv4 address of this
 * machine (what the kubelet's `--node-ip` auto-detection finds for a default route), else
 * undefined. Loopback will not do for a node whose pods are endpoints: the API server refuses
 * EndpointSlices with addresses in 127.0.0.0/8.
 */
export function detectNodeAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** `GOARCH` for this machine's architecture (the value of `kubernetes.io/arch`). */
export function goArch(nodeArch: string = arch()): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return map[nodeArch] ?? nodeArch;
}

/** `v1.35.0-probelet.0.1.0`: what `kubectl get nodes` shows in VERSION, the Kubernetes minor probelet follows first. */
export function kubeletVersion(probeletVersion: string): string {
  return `v${KUBE_VERSION.major}.${KUBE_VERSION.minor}.0-probelet.${probeletVersion}`;
}

/** The Node to create: metadata and spec (its status goes through the status subresource). */
export function initialNode(id: NodeIdentity): Node {
  const os = 'linux';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: id.name,
      labels: {
        'kubernetes.io/hostname': id.name,
        'kubernetes.io/os': os,
        'kubernetes.io/arch': goArch(),
        'beta.kubernetes.io/os': os,
        'beta.kubernetes.io/arch': goArch(),
        ...id.labels,
      },
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: id.taints && id.taints.length > 0 ? { taints: id.taints } : {},
  };
}

/**
 * What the node's conditions are computed from: the conditions under pressure (the eviction
 * manager's, eviction.ts) and the errors that make the node NotReady (runtime-state.ts).
 */
export interface NodeHealth {
  pressure: ReadonlySet<PressureCondition>;
  readyErrors: readonly string[];
}

/** A node with nothing to report: no pressure, Ready. */
export const HEALTHY: NodeHealth = { pressure: new Set(), readyErrors: [] };

type ConditionText = Pick<NodeCondition, 'status' | 'reason' | 'message'>;

/** setters.go: the pressure conditions' words, under pressure and not. */
const PRESSURE_WORDS: Record<PressureCondition, { under: ConditionText; not: ConditionText }> = {
  MemoryPressure: {
    under: { status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
    not: { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  },
  DiskPressure: {
    under: { status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
    not: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  },
  PIDPressure: {
    under: { status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
    not: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  },
};

/**
 * The four conditions (setters.go: MemoryPressure, DiskPressure, PIDPressure, then Ready, which
 * upstream keeps last): Ready is False (`KubeletNotReady`, the aggregated errors as message)
 * while there is any error.
 */
export function nodeConditions(health: NodeHealth): Array<Pick<NodeCondition, 'type' | 'status' | 'reason' | 'message'>> {
  const pressure = (['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const).map((type) => ({ type, ...PRESSURE_WORDS[type][health.pressure.has(type) ? 'under' : 'not'] }));
  const ready =
    health.readyErrors.length === 0
      ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
      : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: aggregateMessage(health.readyErrors) };
  return [...pressure, ready];
}

/**
 * The node status at `now` (RFC 3339): heartbeats now, transition times kept from `previous`
 * while a condition's status is unchanged (as the setters do).
 */
export function nodeStatus(id: NodeIdentity, now: string, previous?: NodeStatus, health: NodeHealth = HEALTHY): NodeStatus {
  const conditions: NodeCondition[] = nodeConditions(health).map((c) => {
    const old = previous?.conditions?.find((p) => p.type === c.type);
    return { ...c, lastHeartbeatTime: now, lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  });
  const capacity = {
    cpu: String(cpus().length),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: String(DEFAULT_MAX_PODS),
    ...id.capacity,
  };
  return {
    capacity,
    allocatable: { ...capacity },
    conditions,
    addresses: [
      { type: 'InternalIP', address: id.address },
      { type: 'Hostname', address: id.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: id.port } },
    nodeInfo: {
      machineID: machineID(),
      systemUUID: '',
      bootID: bootID(),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: id.runtimeVersion,
      kubeletVersion: kubeletVersion(id.probeletVersion),
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: goArch(),
    },
  };
}

/**
 * The status without its heartbeats: what decides whether a report is due before the
 * `nodeStatusReportFrequency` (the kubelet reports an unchanged status only every 5 minutes
 * once its Lease carries the heartbeat).
 */
export function statusFingerprint(status: NodeStatus): string {
  return JSON.stringify({ ...status, conditions: status.conditions?.map((c) => ({ ...c, lastHeartbeatTime: undefined })) });
}

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function machineID(): string {
  return readTrimmed('/etc/machine-id');
}

function bootID(): string {
  return readTrimmed('/proc/sys/kernel/random/boot_id');
}

/** `PRETTY_NAME` of /etc/os-release, as the kubelet's cadvisor reports the OS image. */
function osImage(): string {
  const line = readTrimmed('/etc/os-release')
    .split('\n')
    .find((l) => l.startsWith('PRETTY_NAME='));
  return line ? line.slice('PRETTY_NAME='.length).replace(/^"|"$/g, '') : 'Linux';
}
