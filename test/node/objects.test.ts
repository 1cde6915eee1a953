/** The objects a probelet node writes, built without a cluster: Node, its status, a pod's status for the API, volumes dropped. */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { microTime } from '../../src/node/lease/controller.js';
import { goArch, initialNode, kubeletVersion, nodeStatus, statusFingerprint, type NodeIdentity } from '../../src/node/node-object.js';
import { forAPI, statusPatch } from '../../src/node/status-sink.js';
import { volumesNotMountedMessage, withoutVolumes } from '../../src/node/volumes.js';

const id: NodeIdentity = { name: 'edge-1', runtimeVersion: 'probelet-process://1.0.0', probeletVersion: '1.0.0', port: 10255, address: '10.1.2.3' };

describe('the Node', () => {
  it('carries the kubelet’s standard labels, and the taints asked for', () => {
    const node = initialNode({ ...id, taints: [{ key: 'probelet.dev/simulated', value: 'true', effect: 'NoSchedule' }] });
    expect(node.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': 'edge-1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': goArch() });
    expect(node.spec?.taints).toEqual([{ key: 'probelet.dev/simulated', value: 'true', effect: 'NoSchedule' }]);
    expect(goArch('x64')).toBe('amd64');
    expect(kubeletVersion('1.0.0')).toBe('v1.35.0-probelet.1.0.0');
  });

  it('reports the kubelet’s conditions, keeps transition times while a status holds, and its fingerprint ignores heartbeats', () => {
    const first = nodeStatus(id, '2026-01-01T00:00:00Z');
    expect(first.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(first.addresses).toEqual([
      { type: 'InternalIP', address: '10.1.2.3' },
      { type: 'Hostname', address: 'edge-1' },
    ]);
    expect(first.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10255 } });
    expect(first.allocatable).toEqual(first.capacity);
    const later = nodeStatus(id, '2026-01-01T00:00:10Z', first);
    expect(later.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ lastHeartbeatTime: '2026-01-01T00:00:10Z', lastTransitionTime: '2026-01-01T00:00:00Z' });
    expect(statusFingerprint(later)).toBe(statusFingerprint(first));
  });

  it('writes Lease times as MicroTime (six fractional digits)', () => {
    expect(microTime(Date.UTC(2026, 0, 1, 0, 0, 1, 234))).toBe('2026-01-01T00:00:01.234000Z');
  });
});

describe('a pod’s status for the API', () => {
  it('shows the node’s address for loopback pod and host IPs, and leaves qosClass to the API server', () => {
    const out = forAPI({ phase: 'Running', qosClass: 'BestEffort', podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }], hostIP: '127.0.0.1', hostIPs: [{ ip: '127.0.0.1' }] }, '10.1.2.3');
    expect(out).toEqual({ phase: 'Running', podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }], hostIP: '10.1.2.3', hostIPs: [{ ip: '10.1.2.3' }] });
    // A CRI pod's own address is its own.
    expect(forAPI({ podIP: '10.88.0.5', podIPs: [{ ip: '10.88.0.5' }] }, '10.1.2.3').podIP).toBe('10.88.0.5');
  });
});

describe('volumes', () => {
  it('drops volumes and mounts, naming what was dropped', () => {
    const pod: Pod = {
      metadata: { name: 'p' },
      spec: {
        volumes: [{ name: 'kube-api-access-x1', projected: { sources: [] } }, { name: 'data', emptyDir: {} }],
        initContainers: [{ name: 'init', volumeMounts: [{ name: 'data', mountPath: '/d' }] }],
        containers: [{ name: 'app', volumeMounts: [{ name: 'kube-api-access-x1', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
      },
    };
    const { pod: out, dropped } = withoutVolumes(pod);
    expect(dropped).toEqual(['kube-api-access-x1', 'data']);
    expect(out.spec).toEqual({ initContainers: [{ name: 'init' }], containers: [{ name: 'app' }] });
    expect(pod.spec?.volumes).toHaveLength(2);
    expect(volumesNotMountedMessage(dropped)).toBe(
      'probelet node does not mount volumes yet: running the pod without volumes "kube-api-access-x1", "data" (its containers see no files from them)',
    );
    const bare: Pod = { metadata: { name: 'q' }, spec: { containers: [{ name: 'app' }] } };
    expect(withoutVolumes(bare)).toEqual({ pod: bare, dropped: [] });
  });
});

describe('the status patch', () => {
  it('replaces podIPs and hostIPs instead of merging them by ip (a new sandbox IP would otherwise sit beside the old one, which the API refuses)', () => {
    const patch = statusPatch({ podIP: '100.64.1.9', podIPs: [{ ip: '100.64.1.9' }], hostIPs: [{ ip: '10.0.0.1' }], phase: 'Running' });
    expect(patch).toEqual({
      podIP: '100.64.1.9',
      podIPs: [{ ip: '100.64.1.9' }, { $patch: 'replace' }],
      hostIPs: [{ ip: '10.0.0.1' }, { $patch: 'replace' }],
      phase: 'Running',
    });
    expect(statusPatch({ phase: 'Pending' })).toEqual({ phase: 'Pending' });
  });

  it('sends a condition\'s missing reason, message and lastProbeTime as null: merged by type, Ready turning True would keep its old reason ContainersNotReady', () => {
    const patch = statusPatch({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: 't' }, { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'm', lastTransitionTime: 't' }] });
    expect(patch.conditions).toEqual([
      { type: 'Ready', status: 'True', lastTransitionTime: 't', reason: null, message: null, lastProbeTime: null },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'm', lastTransitionTime: 't', lastProbeTime: null },
    ]);
  });
});
