/**
 * The node's conditions computed as the kubelet computes them: the eviction manager's signals
 * against its default hard thresholds (with a fake machine-stats seam, as the kubelet's tests
 * fake cAdvisor), the pressure transition period, the runtime state behind Ready with
 * upstream's words, and — against the real API server — the Node's conditions as `kubectl
 * describe node` reads them, written only when they change.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Node, NodeCondition } from 'kubernetes-types/core/v1.js';
import type { Event } from '../../src/api/types.js';
import { startNodeAgent } from '../../src/node/agent.js';
import { DEFAULT_EVICTION_HARD, PRESSURE_TRANSITION_PERIOD_MS, createPressureTracker, parseEvictionHard } from '../../src/node/eviction.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/lease/controller.js';
import { conditionChangeReasons } from '../../src/node/node-events.js';
import { plain } from '../../src/node/kube.js';
import { memoryStats, readMachineStats, rlimitStats, type MachineStats } from '../../src/node/machine-stats.js';
import { startNodeHealth } from '../../src/node/node-health.js';
import { detectNodeAddress, nodeConditions, nodeStatus, type NodeHealth } from '../../src/node/node-object.js';
import { MAX_WAIT_FOR_CONTAINER_RUNTIME_MS, RUNTIME_UP_PERIOD_MS, createRuntimeState } from '../../src/node/runtime-state.js';
import { createProcessRuntime } from '../../src/runtime/process-runtime.js';
import type { RuntimeCondition } from '../../src/runtime/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { clusterClients, describeCluster, until } from './helpers.js';

const Mi = 2 ** 20;
const Gi = 2 ** 30;

/** A healthy machine: 8 GiB with 4 free, a 100 GiB disk half free, few tasks. */
function healthy(): MachineStats {
  const fs = { capacityBytes: 100 * Gi, availableBytes: 50 * Gi, inodes: 1_000_000, inodesFree: 900_000 };
  return { memory: { capacityBytes: 8 * Gi, availableBytes: 4 * Gi }, nodeFs: { ...fs }, imageFs: { ...fs }, rlimit: { maxPID: 4_194_304, processes: 500 } };
}

const defaults = parseEvictionHard(DEFAULT_EVICTION_HARD);

describe('the eviction thresholds', () => {
  it('the default hard thresholds are the kubelet’s (defaults_linux.go)', () => {
    expect(defaults).toEqual([
      { signal: 'memory.available', quantity: 100 * Mi },
      { signal: 'nodefs.available', percentage: 0.1 },
      { signal: 'nodefs.inodesFree', percentage: 0.05 },
      { signal: 'imagefs.available', percentage: 0.15 },
      { signal: 'imagefs.inodesFree', percentage: 0.05 },
    ]);
    expect(parseEvictionHard('')).toEqual([]);
    expect(parseEvictionHard('pid.available<1k')).toEqual([{ signal: 'pid.available', quantity: 1000 }]);
  });

  it('a bad --eviction-hard names the entry and what is expected', () => {
    expect(() => parseEvictionHard('memory.free<1Gi')).toThrow('--eviction-hard: "memory.free<1Gi": expected SIGNAL<QUANTITY or SIGNAL<PERCENT% with SIGNAL one of memory.available');
    expect(() => parseEvictionHard('memory.available<lots')).toThrow('"lots" is not a quantity (e.g. 100Mi, 1Gi, 5%)');
    expect(() => parseEvictionHard('nodefs.available<120%')).toThrow('a percentage must be from 0% to 100%');
  });

  it('each signal under its threshold puts its condition under pressure; one just above does not', () => {
    const under = (stats: MachineStats, thresholds = defaults): string[] => [...createPressureTracker(thresholds).update(0, stats)].sort();
    expect(under(healthy())).toEqual([]);
    expect(under({ ...healthy(), memory: { capacityBytes: 8 * Gi, availableBytes: 99 * Mi } })).toEqual(['MemoryPressure']);
    expect(under({ ...healthy(), memory: { capacityBytes: 8 * Gi, availableBytes: 100 * Mi } })).toEqual([]);
    // One filesystem for both: at 12 % free, imagefs.available<15% is met before nodefs.available<10%.
    const fs12 = { capacityBytes: 100 * Gi, availableBytes: 12 * Gi, inodes: 1_000_000, inodesFree: 900_000 };
    expect(under({ ...healthy(), nodeFs: fs12, imageFs: fs12 })).toEqual(['DiskPressure']);
    expect(under({ ...healthy(), nodeFs: { ...fs12, availableBytes: 50 * Gi, inodesFree: 49_999 } })).toEqual(['DiskPressure']);
    // No pid.available threshold by default: never PIDPressure unless one is set.
    const crowded = { ...healthy(), rlimit: { maxPID: 32_768, processes: 32_000 } };
    expect(under(crowded)).toEqual([]);
    expect(under(crowded, [...defaults, ...parseEvictionHard('pid.available<1000')])).toEqual(['PIDPressure']);
    // No observation, no pressure.
    expect(under({})).toEqual([]);
  });

  it('a condition stays under pressure for the transition period (5 min) after it was last observed', () => {
    const tracker = createPressureTracker(defaults);
    const low = { ...healthy(), memory: { capacityBytes: 8 * Gi, availableBytes: 10 * Mi } };
    expect([...tracker.update(0, low)]).toEqual(['MemoryPressure']);
    expect([...tracker.update(10_000, healthy())]).toEqual(['MemoryPressure']);
    expect([...tracker.update(PRESSURE_TRANSITION_PERIOD_MS - 1, healthy())]).toEqual(['MemoryPressure']);
    expect([...tracker.update(PRESSURE_TRANSITION_PERIOD_MS, healthy())]).toEqual([]);
  });
});

describe('the machine’s stats', () => {
  it('memory.available is MemFree + Inactive(file) (capacity − working set), the task count the 4th field of /proc/loadavg', () => {
    const meminfo = 'MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    9000000 kB\nInactive(file):  3000000 kB\n';
    expect(memoryStats(meminfo)).toEqual({ capacityBytes: 16_000_000 * 1024, availableBytes: 4_000_000 * 1024 });
    expect(memoryStats('')).toBeUndefined();
    expect(rlimitStats('4194304\n', '127000\n', '1.36 3.49 4.53 2/3518 3715089\n')).toEqual({ maxPID: 127_000, processes: 3518 });
    expect(rlimitStats('', '', '')).toBeUndefined();
  });

  it('reads this machine: memory, the run directory’s filesystem (also the image filesystem), the task limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-stats-'));
    try {
      const stats = readMachineStats({ nodeDir: dir });
      expect(stats.memory?.capacityBytes).toBeGreaterThan(0);
      expect(stats.nodeFs?.capacityBytes).toBeGreaterThan(0);
      expect(stats.imageFs).toEqual(stats.nodeFs);
      expect(stats.rlimit?.processes).toBeGreaterThan(0);
      expect(readMachineStats({ nodeDir: join(dir, 'missing') }).nodeFs).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const runtimeUp: RuntimeCondition[] = [
  { type: 'RuntimeReady', status: true, reason: '', message: '' },
  { type: 'NetworkReady', status: true, reason: '', message: '' },
];

describe('the runtime state behind Ready (runtime.go, kubelet.go updateRuntimeUp)', () => {
  it('the words of each error, aggregated as utilerrors does', async () => {
    const state = createRuntimeState();
    expect(state.errors(0)).toEqual(['container runtime status check may not have completed yet']);
    await state.update(0, async () => runtimeUp);
    expect(state.errors(0)).toEqual([]);
    await state.update(5_000, async () => [
      { type: 'RuntimeReady', status: false, reason: 'Wedged', message: 'shim gone' },
      { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'Network plugin returns error: cni plugin not initialized' },
    ]);
    expect(state.errors(5_000)).toEqual([
      'container runtime not ready: RuntimeReady=false reason:Wedged message:shim gone',
      'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
    ]);
    // No sync for 30 s: down as well.
    expect(state.errors(MAX_WAIT_FOR_CONTAINER_RUNTIME_MS)[0]).toBe('container runtime is down');
    const ready = nodeConditions({ pressure: new Set(), readyErrors: state.errors(MAX_WAIT_FOR_CONTAINER_RUNTIME_MS) }).at(-1);
    expect(ready).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'KubeletNotReady',
      message:
        '[container runtime is down, container runtime not ready: RuntimeReady=false reason:Wedged message:shim gone, container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized]',
    });
    // A runtime that reports nothing for a condition: `<nil>`.
    await state.update(40_000, async () => []);
    expect(state.errors(40_000)).toContain('container runtime not ready: <nil>');
  });

  it('a runtime that stops answering makes the node NotReady after 30 s ("container runtime is down"), Ready again once it answers', async () => {
    const clock = new FakeClock(0);
    let answering = true;
    const health = startNodeHealth({ runtime: { runtimeStatus: async () => (answering ? runtimeUp : Promise.reject(new Error('connection refused'))) }, clock });
    await health.checked;
    expect(health.current().readyErrors).toEqual([]);
    answering = false;
    await clock.advance(MAX_WAIT_FOR_CONTAINER_RUNTIME_MS - RUNTIME_UP_PERIOD_MS);
    expect(health.current().readyErrors).toEqual([]);
    await clock.advance(RUNTIME_UP_PERIOD_MS);
    expect(health.current().readyErrors).toEqual(['container runtime is down']);
    answering = true;
    await clock.advance(RUNTIME_UP_PERIOD_MS);
    expect(health.current().readyErrors).toEqual([]);
    health.close();
  });

  it('without machine stats (a simulated node) no pressure is ever reported; with them, the seam’s', async () => {
    const clock = new FakeClock(0);
    const none = startNodeHealth({ runtime: {}, clock });
    await none.checked;
    expect(none.current()).toEqual({ pressure: new Set(), readyErrors: [] });
    none.close();
    const low = startNodeHealth({ runtime: {}, clock, machineStats: () => ({ ...healthy(), memory: { capacityBytes: Gi, availableBytes: Mi } }) });
    await low.checked;
    expect([...low.current().pressure]).toEqual(['MemoryPressure']);
    low.close();
  });
});

describe('the node conditions (setters.go)', () => {
  const id = { name: 'n', runtimeVersion: 'probelet-process://t', probeletVersion: 't', port: 1, address: '10.0.0.1' };
  const pick = (cs: NodeCondition[] | undefined): Array<Pick<NodeCondition, 'type' | 'status' | 'reason' | 'message'>> =>
    (cs ?? []).map(({ type, status, reason, message }) => ({ type, status, reason, message }));

  it('under pressure: the kubelet’s reasons and messages; Ready last', () => {
    const health: NodeHealth = { pressure: new Set(['MemoryPressure', 'DiskPressure', 'PIDPressure']), readyErrors: [] };
    expect(pick(nodeStatus(id, 't0', undefined, health).conditions)).toEqual([
      { type: 'MemoryPressure', status: 'True', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available' },
      { type: 'DiskPressure', status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
      { type: 'PIDPressure', status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
      { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    ]);
  });

  it('a transition time changes only with the status', () => {
    const first = nodeStatus(id, '2026-01-01T00:00:00Z');
    const same = nodeStatus(id, '2026-01-01T00:00:10Z', first);
    expect(same.conditions?.map((c) => c.lastTransitionTime)).toEqual(first.conditions?.map(() => '2026-01-01T00:00:00Z'));
    const pressed = nodeStatus(id, '2026-01-01T00:00:20Z', same, { pressure: new Set(['DiskPressure']), readyErrors: [] });
    expect(pressed.conditions?.map((c) => c.lastTransitionTime)).toEqual(['2026-01-01T00:00:00Z', '2026-01-01T00:00:20Z', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z']);
  });
});

describe('the node’s events (setters.go, recordNodeStatusEvent)', () => {
  const cond = (type: string, status: string): NodeCondition => ({ type, status });
  it('a new or changed pressure condition is recorded, Ready only when it flips', () => {
    const healthyNow = [cond('MemoryPressure', 'False'), cond('DiskPressure', 'False'), cond('PIDPressure', 'False'), cond('Ready', 'True')];
    expect(conditionChangeReasons(undefined, healthyNow)).toEqual(['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID']);
    expect(conditionChangeReasons(healthyNow, healthyNow)).toEqual([]);
    const sick = [cond('MemoryPressure', 'True'), cond('DiskPressure', 'False'), cond('PIDPressure', 'False'), cond('Ready', 'False')];
    expect(conditionChangeReasons(healthyNow, sick)).toEqual(['NodeHasInsufficientMemory', 'NodeNotReady']);
    expect(conditionChangeReasons(sick, healthyNow)).toEqual(['NodeHasSufficientMemory', 'NodeReady']);
  });
});

describeCluster('node conditions through the real API server', () => {
  it('memory pressure and a runtime that is not ready show on the Node as kubectl describe node reads them; an unchanged status is not written again', async () => {
    const clients = clusterClients();
    const nodeName = `h20a-conditions-${randomBytes(3).toString('hex')}`;
    const runDir = mkdtempSync(join(tmpdir(), 'probelet-node-conditions-'));
    let stats = healthy();
    let runtimeConditions = runtimeUp;
    const runtime = Object.assign(createProcessRuntime({ runDir }), { runtimeStatus: async () => runtimeConditions });
    const agent = await startNodeAgent({
      clients,
      name: nodeName,
      runtime,
      runtimeVersion: 'probelet-process://test',
      probeletVersion: 'test',
      port: 10255,
      address: detectNodeAddress() ?? '10.255.255.1',
      log: () => undefined,
      machineStats: () => stats,
    });
    try {
      const read = async (): Promise<Node> => plain<Node>(await clients.core.readNode({ name: nodeName }));
      const first = await read();
      expect(pick(first.status?.conditions)).toEqual([
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
        ['Ready', 'True', 'KubeletReady'],
      ]);
      // Nothing changed for a status period (10 s): nothing written (the Lease is the heartbeat);
      // a write would carry new heartbeat times. (Other writers — the node lifecycle controller
      // removing its not-ready taint — change the resourceVersion, not the conditions.)
      const heartbeats = (n: Node): Array<string | undefined> => (n.status?.conditions ?? []).map((c) => c.lastHeartbeatTime);
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      expect(heartbeats(await read())).toEqual(heartbeats(first));

      stats = { ...healthy(), memory: { capacityBytes: 8 * Gi, availableBytes: 50 * Mi } };
      runtimeConditions = [{ type: 'RuntimeReady', status: false, reason: 'TestDown', message: 'stopped by the test' }, runtimeUp[1] as RuntimeCondition];
      const changed = await until('the new conditions on the Node', async () => {
        const node = await read();
        return node.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.status === 'True' ? node : undefined;
      }, 30_000);
      expect(pick(changed.status?.conditions)).toEqual([
        ['MemoryPressure', 'True', 'KubeletHasInsufficientMemory'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
        ['Ready', 'False', 'KubeletNotReady'],
      ]);
      const ready = changed.status?.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.message).toBe('container runtime not ready: RuntimeReady=false reason:TestDown message:stopped by the test');
      expect(changed.status?.conditions?.find((c) => c.type === 'MemoryPressure')?.message).toBe('kubelet has insufficient memory available');

      // The events kubectl describe node shows, from "kubelet" on the node, about the Node.
      const events = await until('the node’s events', async () => {
        const list = plain<{ items: Event[] }>(await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${nodeName}` })).items;
        // The node controller's RegisteredNode is there too: only the kubelet's are ours.
        const own = list.filter((e) => e.source?.component === 'kubelet');
        return own.some((e) => e.reason === 'NodeNotReady') ? own : undefined;
      }, 15_000);
      const said = events.map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`).sort();
      expect(said).toEqual(
        [
          'NodeHasInsufficientMemory',
          'NodeHasNoDiskPressure',
          'NodeHasSufficientMemory',
          'NodeHasSufficientPID',
          'NodeNotReady',
        ]
          .map((r) => `${r}: Node ${nodeName} status is now: ${r}`)
          .concat('Starting: Starting kubelet.')
          .sort(),
      );
      for (const e of events) {
        expect(e.involvedObject).toEqual({ apiVersion: 'v1', kind: 'Node', name: nodeName });
        expect(e.source).toEqual({ component: 'kubelet', host: nodeName });
        expect(e.type).toBe('Normal');
      }
    } finally {
      await agent.close();
      await clients.coordination.deleteNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE }).catch(() => undefined);
      await clients.core.deleteNode({ name: nodeName }).catch(() => undefined);
      rmSync(runDir, { recursive: true, force: true });
    }
  }, 90_000);

  function pick(cs: NodeCondition[] | undefined): string[][] {
    return (cs ?? []).map((c) => [c.type, c.status, c.reason ?? '']);
  }
});
