/**
 * The CRI runtime against a fake CRI runtime service (the seam upstream's own kubelet tests
 * fake), for what a real containerd will not do on cue: leftovers that refuse removal, and
 * containers that vanish behind the kubelet's back. No containerd needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { CriClient } from '../../src/runtime/cri/client.js';
import { CriRuntime, VANISHED_MESSAGE, VANISHED_REASON } from '../../src/runtime/cri/cri-runtime.js';
import { MANAGED_LABEL, NODE_LABEL, PID_LABEL } from '../../src/runtime/cri/pod-config.js';
import type * as cri from '../../src/runtime/cri/types.js';
import type { ContainerEvent } from '../../src/runtime/types.js';

const VERSION: cri.VersionResponse = { version: 'v1', runtime_name: 'containerd', runtime_version: '1.7', runtime_api_version: 'v1' };

/** A gRPC NOT_FOUND, as grpc-js rejects with it. */
function notFound(what: string): Error {
  return Object.assign(new Error(`5 NOT_FOUND: ${what} not found`), { code: 5, details: `${what} not found` });
}

/** A container as the fake keeps it: its status, and the sandbox it is in. */
type FakeContainer = cri.ContainerStatus & { pod_sandbox_id: string };

function fakeContainer(id: string, sandboxID: string, state: cri.ContainerState, labels: cri.Labels): FakeContainer {
  return { id, pod_sandbox_id: sandboxID, state, created_at: 0, started_at: 0, finished_at: 0, exit_code: 0, image_ref: '', reason: '', message: '', labels, log_path: '' };
}

/** An in-memory runtime service: sandboxes and containers by ID; `refuse` lists IDs whose removal fails, `failStart` IDs whose start fails. */
interface FakeService {
  client: CriClient;
  sandboxes: Map<string, cri.PodSandbox>;
  containers: Map<string, FakeContainer>;
  removed: string[];
  refuse: Set<string>;
  failStart: Set<string>;
}

function fakeService(): FakeService {
  const svc: FakeService = { client: undefined as unknown as CriClient, sandboxes: new Map(), containers: new Map(), removed: [], refuse: new Set(), failStart: new Set() };
  let next = 1;
  const unused = (): Promise<never> => Promise.reject(new Error('not used by these tests'));
  const selected = (labels: cri.Labels, selector: cri.Labels | undefined): boolean => Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
  const remove = (id: string, from: Map<string, unknown>): Promise<object> => {
    if (svc.refuse.has(id)) return Promise.reject(Object.assign(new Error('2 UNKNOWN: failed to remove'), { code: 2, details: 'failed to remove: device or resource busy' }));
    if (from.delete(id)) svc.removed.push(id);
    return Promise.resolve({});
  };
  svc.client = {
    endpoint: 'unix:///fake/containerd.sock',
    Version: () => Promise.resolve(VERSION),
    Status: unused,
    RunPodSandbox: (req) => {
      const id = `sb-${next++}`;
      svc.sandboxes.set(id, { id, state: 'SANDBOX_READY', created_at: 0, labels: req.config.labels ?? {} });
      return Promise.resolve({ pod_sandbox_id: id });
    },
    StopPodSandbox: () => Promise.resolve({}),
    RemovePodSandbox: (req) => remove(req.pod_sandbox_id, svc.sandboxes),
    PodSandboxStatus: () => Promise.resolve({ status: { network: { ip: '169.254.9.2' } } } as cri.PodSandboxStatusResponse),
    ListPodSandbox: (req) => Promise.resolve({ items: [...svc.sandboxes.values()].filter((x) => selected(x.labels, req.filter?.label_selector)) }),
    CreateContainer: (req) => {
      const id = `ctr-${next++}`;
      svc.containers.set(id, fakeContainer(id, req.pod_sandbox_id, 'CONTAINER_CREATED', req.config.labels ?? {}));
      return Promise.resolve({ container_id: id });
    },
    StartContainer: (req) => {
      const c = svc.containers.get(req.container_id);
      if (!c) return Promise.reject(notFound(`container ${req.container_id}`));
      if (svc.failStart.has(req.container_id)) {
        // Refused, and gone by the time anyone asks (a runtime that cleans up after a failed start).
        svc.containers.delete(req.container_id);
        return Promise.reject(Object.assign(new Error('2 UNKNOWN: exec: "nope": executable file not found in $PATH'), { code: 2, details: 'exec: "nope": executable file not found in $PATH' }));
      }
      Object.assign(c, { state: 'CONTAINER_RUNNING', started_at: 2 });
      return Promise.resolve({});
    },
    StopContainer: (req) => {
      const c = svc.containers.get(req.container_id);
      if (c) Object.assign(c, { state: 'CONTAINER_EXITED', exit_code: 137, finished_at: 3 });
      return Promise.resolve({});
    },
    RemoveContainer: (req) => remove(req.container_id, svc.containers),
    ListContainers: (req) =>
      Promise.resolve({
        containers: [...svc.containers.values()].filter((x) => selected(x.labels, req.filter?.label_selector)).map((c) => ({ ...c, created_at: c.created_at })),
      }),
    ContainerStatus: (req) => {
      const c = svc.containers.get(req.container_id);
      return c ? Promise.resolve({ status: { ...c } }) : Promise.reject(notFound(`container ${req.container_id}`));
    },
    ExecSync: unused,
    ImageStatus: unused,
    PullImage: unused,
    close: () => undefined,
  };
  return svc;
}

/** Labels of something a probelet process that is gone (PID 0 never runs one) left behind. */
const LEFT: cri.Labels = { [MANAGED_LABEL]: 'true', [PID_LABEL]: '0' };

/** Warnings emitted while `body` runs (and the turn after it). */
async function warningsOf(body: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

let runDir: string | undefined;
afterEach(() => {
  if (runDir) rmSync(runDir, { recursive: true, force: true });
  runDir = undefined;
});

function runtimeOn(svc: FakeService): CriRuntime {
  runDir = mkdtempSync(join(tmpdir(), 'probelet-fake-cri-'));
  return new CriRuntime(svc.client, VERSION, { endpoint: svc.client.endpoint, runDir, relistPeriodMs: 60_000 });
}

describe('leftovers of earlier runs', () => {
  function withLeftovers(): FakeService {
    const svc = fakeService();
    for (const n of ['a', 'b']) {
      svc.sandboxes.set(`sb-${n}`, { id: `sb-${n}`, state: 'SANDBOX_NOTREADY', created_at: 0, labels: LEFT });
      svc.containers.set(`ctr-${n}`, fakeContainer(`ctr-${n}`, `sb-${n}`, 'CONTAINER_EXITED', LEFT));
    }
    return svc;
  }

  it('removes the leftovers it can and names each one it cannot, with the crictl line that removes it, instead of failing the start', async () => {
    const svc = withLeftovers();
    svc.refuse = new Set(['ctr-a', 'sb-a']);
    const runtime = runtimeOn(svc);
    const warnings = await warningsOf(() => runtime.removeLeftovers());
    expect(svc.removed).toEqual(['ctr-b', 'sb-b']);
    expect(warnings).toEqual([
      'could not remove the container ctr-a an earlier probelet left in unix:///fake/containerd.sock: failed to remove: device or resource busy; remove it by hand (crictl rm -f ctr-a)',
      'could not remove the sandbox sb-a an earlier probelet left in unix:///fake/containerd.sock: failed to remove: device or resource busy; remove it by hand (crictl rmp -f sb-a)',
    ]);
    await runtime.close();
  });

  it('leaves what a node agent left to that node (it takes them over when it starts again): a run removes only the other leftovers', async () => {
    const svc = withLeftovers();
    const ofNode: cri.Labels = { ...LEFT, [NODE_LABEL]: 'edge-1' };
    svc.sandboxes.set('sb-node', { id: 'sb-node', state: 'SANDBOX_READY', created_at: 0, labels: ofNode });
    svc.containers.set('ctr-node', fakeContainer('ctr-node', 'sb-node', 'CONTAINER_RUNNING', ofNode));
    const runtime = runtimeOn(svc);
    await runtime.removeLeftovers();
    expect(svc.removed.sort()).toEqual(['ctr-a', 'ctr-b', 'sb-a', 'sb-b']);
    await runtime.close();
  });

  it('names each of its own pods it cannot remove at close, with the way to remove it', async () => {
    const svc = fakeService();
    const runtime = runtimeOn(svc);
    const kept = await runtime.runPodSandbox({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: '00000000-0000-4000-8000-000000000009' }, spec: { containers: [] } });
    svc.refuse.add(kept.id);
    const warnings = await warningsOf(() => runtime.close());
    expect(warnings).toEqual([
      `could not remove the sandbox ${kept.id} of this run from unix:///fake/containerd.sock: failed to remove: device or resource busy; the next start removes it, or remove it by hand (crictl rmp -f ${kept.id})`,
    ]);
  });

  it('containerd gone at close (Ctrl-C while it is down): one plain line naming what is left, why, and the crictl line, not a raw gRPC error', async () => {
    const svc = fakeService();
    const said: string[] = [];
    runDir = mkdtempSync(join(tmpdir(), 'probelet-fake-cri-'));
    const runtime = new CriRuntime(svc.client, VERSION, { endpoint: svc.client.endpoint, runDir, relistPeriodMs: 60_000, warn: (m) => void said.push(m) });
    const pod = (n: number): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${n}`, namespace: 'default', uid: `00000000-0000-4000-8000-00000000001${n}` }, spec: { containers: [] } });
    const a = await runtime.runPodSandbox(pod(1));
    const b = await runtime.runPodSandbox(pod(2));
    const down = (): Promise<never> => Promise.reject(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established. Last error: connect ECONNREFUSED /fake/containerd.sock' }));
    svc.client.ListPodSandbox = down;
    svc.client.ListContainers = down;
    const warnings = await warningsOf(() => runtime.close());
    expect(warnings).toEqual([]); // no Node warning: the CLI prints the line as its own
    expect(said).toEqual([
      `this run could not remove its 2 pod sandboxes (and their containers): cannot reach the container runtime at unix:///fake/containerd.sock: No connection established. Last error: connect ECONNREFUSED /fake/containerd.sock; is containerd (or CRI-O) running?; ` +
        `the next probelet start on unix:///fake/containerd.sock removes them, or once the runtime is back: crictl --runtime-endpoint unix:///fake/containerd.sock rmp -f ${a.id} ${b.id}`,
    ]);
  });

  it('a sandbox stop whose network teardown raced another stop (a second Ctrl-C) is tried again, and the sandbox removed', async () => {
    const svc = fakeService();
    const runtime = runtimeOn(svc);
    const sandbox = await runtime.runPodSandbox({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: '00000000-0000-4000-8000-000000000019' }, spec: { containers: [] } });
    let stops = 0;
    const stop = svc.client.StopPodSandbox;
    svc.client.StopPodSandbox = (req, ms) =>
      stops++ === 0
        ? Promise.reject(Object.assign(new Error('2 UNKNOWN: teardown'), { code: 2, details: `failed to destroy network for sandbox "${sandbox.id}": plugin type="bridge" failed (delete): failed to delete "eth0": no such device` }))
        : stop(req, ms);
    const warnings = await warningsOf(() => runtime.close());
    expect(warnings).toEqual([]);
    expect(svc.removed).toEqual([sandbox.id]);
    expect(stops).toBe(2);
  });

  it('fails the start when the runtime cannot even list them', async () => {
    const svc = withLeftovers();
    // Unavailable for the first listing only: close() afterwards lists (and finds nothing of its run).
    let listings = 0;
    const list = svc.client.ListPodSandbox;
    svc.client = { ...svc.client, ListPodSandbox: (req, ms) => (listings++ === 0 ? Promise.reject(new Error('14 UNAVAILABLE: connection refused')) : list(req, ms)) };
    const runtime = runtimeOn(svc);
    await expect(runtime.removeLeftovers()).rejects.toThrow('UNAVAILABLE');
    await runtime.close();
  });
});

describe('containers that vanish behind the kubelet', () => {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: '00000000-0000-4000-8000-000000000001' },
    spec: { containers: [{ name: 'app', image: 'busybox' }] },
  };
  const app = pod.spec?.containers[0] as NonNullable<Pod['spec']>['containers'][number];

  it('a running container removed behind its back: exited 137, ContainerStatusUnknown in upstream words, and an `exited` event', async () => {
    const svc = fakeService();
    const runtime = runtimeOn(svc);
    const events: ContainerEvent[] = [];
    runtime.subscribe((e) => events.push(e));
    const sandbox = await runtime.runPodSandbox(pod);
    const started = await runtime.startContainer(sandbox.id, pod, app, 0);
    expect(started.state).toBe('running');
    svc.containers.clear();
    await runtime.relist();
    expect(runtime.containerStatus(started.id)).toMatchObject({ state: 'exited', exitCode: 137, reason: VANISHED_REASON, message: VANISHED_MESSAGE });
    expect(events.map((e) => e.type)).toEqual(['started', 'exited']);
    await runtime.close();
  });

  it('a start that fails and leaves no container: StartError 128 with the runtime\'s words, not the vanished-while-running wording', async () => {
    const svc = fakeService();
    const runtime = runtimeOn(svc);
    const sandbox = await runtime.runPodSandbox(pod);
    // The next container ID the fake hands out.
    svc.failStart.add(`ctr-${svc.sandboxes.size + 1}`);
    const status = await runtime.startContainer(sandbox.id, pod, app, 0);
    expect(status).toMatchObject({ state: 'exited', exitCode: 128, reason: 'StartError', message: 'exec: "nope": executable file not found in $PATH' });
    await runtime.close();
  });
});
