/**
 * Leftovers of earlier runs, against a fake CRI runtime service (the seam upstream's own
 * kubelet tests fake): one that cannot be removed is a warning naming it and the fix,
 * never a failed start, and the others are removed all the same. No containerd needed.
 */
import { expect, it } from 'vitest';
import type { CriClient } from '../../src/runtime/cri/client.js';
import { CriRuntime } from '../../src/runtime/cri/cri-runtime.js';
import { MANAGED_LABEL, PID_LABEL } from '../../src/runtime/cri/pod-config.js';
import type * as cri from '../../src/runtime/cri/types.js';

/** Labels of something a probelet process that is gone (PID 0 never runs one) left behind. */
const LEFT: cri.Labels = { [MANAGED_LABEL]: 'true', [PID_LABEL]: '0' };

/** A runtime service holding two leftover sandboxes with a container each; `stuck` refuses removal. */
function fakeRuntime(stuck: ReadonlySet<string>): { client: CriClient; removed: string[] } {
  const removed: string[] = [];
  const sandbox = (id: string): cri.PodSandbox => ({ id, state: 'SANDBOX_NOTREADY', created_at: 0, labels: LEFT });
  const container = (id: string, sandboxID: string): cri.Container => ({ id, pod_sandbox_id: sandboxID, state: 'CONTAINER_EXITED', created_at: 0, labels: LEFT });
  const remove = (id: string): Promise<object> => {
    if (stuck.has(id)) return Promise.reject(Object.assign(new Error('2 UNKNOWN: failed to remove'), { details: 'failed to remove: device or resource busy' }));
    removed.push(id);
    return Promise.resolve({});
  };
  const unused = (): Promise<never> => Promise.reject(new Error('not used by this test'));
  const selected = (labels: cri.Labels, selector: cri.Labels | undefined): boolean => Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
  const client: CriClient = {
    endpoint: 'unix:///fake/containerd.sock',
    Version: unused,
    Status: unused,
    RunPodSandbox: unused,
    StopPodSandbox: () => Promise.resolve({}),
    RemovePodSandbox: (req) => remove(req.pod_sandbox_id),
    PodSandboxStatus: unused,
    ListPodSandbox: (req) => Promise.resolve({ items: [sandbox('sb-a'), sandbox('sb-b')].filter((x) => selected(x.labels, req.filter?.label_selector)) }),
    CreateContainer: unused,
    StartContainer: unused,
    StopContainer: () => Promise.resolve({}),
    RemoveContainer: (req) => remove(req.container_id),
    ListContainers: (req) =>
      Promise.resolve({ containers: [container('ctr-a', 'sb-a'), container('ctr-b', 'sb-b')].filter((x) => selected(x.labels, req.filter?.label_selector)) }),
    ContainerStatus: unused,
    ExecSync: unused,
    ImageStatus: unused,
    PullImage: unused,
    close: () => undefined,
  };
  return { client, removed };
}

it('removes the leftovers it can and names each one it cannot, with the crictl line that removes it, instead of failing the start', async () => {
  const { client, removed } = fakeRuntime(new Set(['ctr-a', 'sb-a']));
  const runtime = new CriRuntime(client, { version: 'v1', runtime_name: 'containerd', runtime_version: '1.7', runtime_api_version: 'v1' }, { endpoint: client.endpoint, runDir: '/nonexistent' });
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    await runtime.removeLeftovers();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  expect(removed).toEqual(['ctr-b', 'sb-b']);
  expect(warnings).toEqual([
    'could not remove the container ctr-a an earlier probelet left in unix:///fake/containerd.sock: failed to remove: device or resource busy; remove it by hand (crictl rm -f ctr-a)',
    'could not remove the sandbox sb-a an earlier probelet left in unix:///fake/containerd.sock: failed to remove: device or resource busy; remove it by hand (crictl rmp -f sb-a)',
  ]);
  await runtime.close();
});

it('fails the start when the runtime cannot even list them', async () => {
  const { client } = fakeRuntime(new Set());
  // Unavailable for the first listing only: close() afterwards lists (and finds nothing of its run).
  let listings = 0;
  const broken: CriClient = {
    ...client,
    ListPodSandbox: (req, ms) => (listings++ === 0 ? Promise.reject(new Error('14 UNAVAILABLE: connection refused')) : client.ListPodSandbox(req, ms)),
  };
  const runtime = new CriRuntime(broken, { version: 'v1', runtime_name: 'containerd', runtime_version: '1.7', runtime_api_version: 'v1' }, { endpoint: client.endpoint, runDir: '/nonexistent' });
  await expect(runtime.removeLeftovers()).rejects.toThrow('UNAVAILABLE');
  await runtime.close();
});
