/**
 * The CRI runtime on a real containerd, below and with the kubelet: ExecSync (exit code,
 * output, timeout → the runner's TimeoutError), the image's entrypoint for a container
 * without `command`, the log layout, host network, image pulls that fail (ErrImagePull →
 * ImagePullBackOff), leftovers of a crashed run, and errors that name the fix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, expect, it } from 'vitest';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { createCriRuntime } from '../../src/runtime/cri/cri-runtime.js';
import { MANAGED_LABEL, PID_LABEL, PID_START_LABEL, RUN_LABEL, processStartTime } from '../../src/runtime/cri/pod-config.js';
import { current, eventsWith, freePort, run, statusOf, until, waitEvent, waitRunning } from '../e2e/helpers.js';
import { BUSYBOX, CRI_ENDPOINT, bb, describeCri, httpd, pod, sh, startCriKubelet, stopCriKubelets } from './helpers.js';

afterEach(async ({ task }) => {
  await stopCriKubelets(task.id);
});

describeCri('cri: the runtime on containerd', () => {
  it.concurrent('ExecSync passes exit code and output (stdout then stderr) through, with env and workingDir; a timeout is the runner TimeoutError; logs read back', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    run(h, pod('exec', [bb(h, 'c', sh('echo started; echo warming >&2; exec sleep 600'), { env: [{ name: 'FOO', value: 'bar' }], workingDir: '/tmp' })], { terminationGracePeriodSeconds: 2 }));
    const id = (await waitRunning(h, 'exec', 'c')).containerID ?? '';
    // The container's output as `kubectl logs` shows it, read back from the CRI log file
    // (stdout and stderr are separate pipes: their relative order is the runtime's).
    await until(() => (h.kubelet.containerLogs(id).split('\n').sort().join(',') === ',started,warming' ? true : undefined), 15_000);
    const result = await h.runtime.execSync(id, sh('echo out-$FOO; pwd; echo err >&2; exit 3'), 5000);
    expect(result).toEqual({ exitCode: 3, output: 'out-bar\n/tmp\nerr\n' });
    const t0 = performance.now();
    const err = await h.runtime.execSync(id, ['sleep', '30'], 1000).catch((e: unknown) => e);
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(err).toMatchObject({ name: 'TimeoutError', message: 'command timed out: "sleep 30" timed out after 1s' });
  });

  it.concurrent('each container has a PID namespace of its own (its process is PID 1, not pause) unless shareProcessNamespace; ExecSync on an exited container errors in the kubelet\'s words', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    run(
      h,
      pod('own-pid', [bb(h, 'c', sh('exec sleep 600'))], { terminationGracePeriodSeconds: 2 }),
      pod('shared-pid', [bb(h, 'c', sh('exec sleep 600'))], { terminationGracePeriodSeconds: 2, shareProcessNamespace: true }),
      pod('gone', [bb(h, 'c', sh('exit 0'))], { restartPolicy: 'Never' }),
    );
    const own = (await waitRunning(h, 'own-pid', 'c')).containerID ?? '';
    const shared = (await waitRunning(h, 'shared-pid', 'c')).containerID ?? '';
    // On the kubelet a shell ignoring SIGTERM as PID 1 is killed only at the grace period's end (137).
    expect(await h.runtime.execSync(own, ['cat', '/proc/1/comm'], 5000)).toEqual({ exitCode: 0, output: 'sleep\n' });
    expect(await h.runtime.execSync(shared, ['cat', '/proc/1/comm'], 5000)).toEqual({ exitCode: 0, output: 'pause\n' });
    await until(() => statusOf(current(h, 'gone'), 'c')?.state?.terminated, 15_000);
    const gone = statusOf(current(h, 'gone'), 'c')?.containerID ?? '';
    const err = await h.runtime.execSync(gone, ['true'], 5000).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^rpc error: code = \w+ desc = /);
  });

  it.concurrent('a container without command runs the image CMD; args are $(VAR)-expanded; logs follow <pod dir>/<container>/<attempt>.log', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    const [admitted] = run(
      h,
      pod('entry', [bb(h, 'plain', undefined)], { restartPolicy: 'Never' }),
      pod('args', [bb(h, 'c', undefined, { args: ['sh', '-c', 'echo hello-$(WHO); echo oops >&2'], env: [{ name: 'WHO', value: 'world' }] })], { restartPolicy: 'Never' }),
    );
    // busybox's CMD is `sh`: without stdin it exits 0 at once.
    const plain = await until(() => statusOf(current(h, 'entry'), 'plain')?.state?.terminated, 15_000);
    expect(plain).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const done = await until(() => statusOf(current(h, 'args'), 'c')?.state?.terminated, 15_000);
    expect(done.exitCode).toBe(0);
    const uid = h.kubelet.listPods().find((p) => p.metadata?.name === 'args')?.metadata?.uid ?? '';
    const logFile = join(h.dir, 'pods', `default_args_${uid}`, 'c', '0.log');
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n').map((l) => l.replace(/^\S+ /, '')).sort();
    expect(lines).toEqual(['stderr F oops', 'stdout F hello-world']);
    expect(admitted?.metadata?.name).toBe('entry');
  });

  it.concurrent('hostNetwork: the pod IP is the node’s and a probe reaches the container on 127.0.0.1', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    const port = await freePort();
    run(h, pod('hostnet', [bb(h, 'c', httpd(port), { readinessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 1 } })], { hostNetwork: true, terminationGracePeriodSeconds: 2 }));
    await until(() => (current(h, 'hostnet')?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined), 15_000);
    expect(current(h, 'hostnet')?.status?.podIP).toBe('127.0.0.1');
  });

  it.concurrent('a missing image: Pulling, Failed (ErrImagePull), then ImagePullBackOff with its own back-off; Never → ErrImageNeverPull', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    const image = 'probelet.local/missing:1';
    run(
      h,
      pod('pull', [bb(h, 'c', ['sleep', '600'], { image })]),
      pod('never', [bb(h, 'c', ['sleep', '600'], { image, imagePullPolicy: 'Never' })]),
    );
    await waitEvent(h, 'pull', 'Pulling', `Pulling image "${image}"`, 10_000);
    const failed = await waitEvent(h, 'pull', 'Failed', `Failed to pull image "${image}": rpc error: code = `, 10_000);
    expect(failed.type).toBe('Warning');
    expect(failed.message).toContain('ctr -n k8s.io image import');
    await waitEvent(h, 'pull', 'Failed', 'Error: ErrImagePull', 10_000);
    await waitEvent(h, 'pull', 'BackOff', `Back-off pulling image "${image}"`, 10_000);
    await waitEvent(h, 'pull', 'Failed', 'Error: ImagePullBackOff', 10_000);
    expect(statusOf(current(h, 'pull'), 'c')?.state?.waiting?.reason).toBe('ImagePullBackOff');
    // Within the 10 s back-off it does not pull again.
    expect(eventsWith(h, 'pull', 'Pulling', '')[0]?.count ?? 1).toBe(1);
    await waitEvent(h, 'never', 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`, 10_000);
    expect(statusOf(current(h, 'never'), 'c')?.state?.waiting?.reason).toBe('ErrImageNeverPull');
  });

  it.concurrent('a running container removed behind the kubelet’s back: ContainerStatusUnknown, exit 137, then restarted', async ({ task }) => {
    const h = await startCriKubelet(task.id);
    run(h, pod('gone', [bb(h, 'c', ['sleep', '600'])], { terminationGracePeriodSeconds: 1 }));
    const id = (await waitRunning(h, 'gone', 'c')).containerID?.replace(/^containerd:\/\//, '') ?? '';
    const client = createCriClient(CRI_ENDPOINT);
    try {
      await client.StopContainer({ container_id: id, timeout: 0 });
      await client.RemoveContainer({ container_id: id });
    } finally {
      client.close();
    }
    const last = await until(() => statusOf(current(h, 'gone'), 'c')?.lastState?.terminated, 15_000);
    expect(last).toMatchObject({ exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was deleted.  The container used to be Running' });
    await until(() => (statusOf(current(h, 'gone'), 'c')?.state?.running ? true : undefined), 15_000);
    expect(statusOf(current(h, 'gone'), 'c')?.restartCount).toBe(1);
  });

  it('removes the sandboxes of a crashed run (its probelet process is gone, or its PID reused) at start, and leaves a live run alone', async () => {
    const client = createCriClient(CRI_ENDPOINT);
    const dead = spawn('true');
    await once(dead, 'exit');
    const config = (name: string, pid: number, pidStart?: string) => ({
      metadata: { name, uid: `uid-${name}-${Date.now()}`, namespace: 'default', attempt: 0 },
      log_directory: '',
      labels: { [MANAGED_LABEL]: 'true', [RUN_LABEL]: `test-${name}`, [PID_LABEL]: String(pid), ...(pidStart !== undefined ? { [PID_START_LABEL]: pidStart } : {}) },
      annotations: {},
      linux: { security_context: { namespace_options: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const } } },
    });
    const crashed = await client.RunPodSandbox({ config: config('crashed', dead.pid ?? 0) });
    const live = await client.RunPodSandbox({ config: config('live', process.pid, processStartTime(process.pid)) });
    // A crashed run whose PID now belongs to another process (ours, started later than it says).
    const reused = await client.RunPodSandbox({ config: config('reused', process.pid, '1') });
    const runDir = mkdtempSync(join(tmpdir(), 'probelet-cri-'));
    try {
      const runtime = await createCriRuntime({ endpoint: CRI_ENDPOINT, runDir });
      await runtime.close();
      const { items } = await client.ListPodSandbox({ filter: { label_selector: { [MANAGED_LABEL]: 'true' } } });
      const ids = items.map((s) => s.id);
      expect(ids).not.toContain(crashed.pod_sandbox_id);
      expect(ids).not.toContain(reused.pod_sandbox_id);
      expect(ids).toContain(live.pod_sandbox_id);
    } finally {
      for (const id of [crashed.pod_sandbox_id, reused.pod_sandbox_id, live.pod_sandbox_id]) {
        await client.StopPodSandbox({ pod_sandbox_id: id }).catch(() => undefined);
        await client.RemovePodSandbox({ pod_sandbox_id: id }).catch(() => undefined);
      }
      client.close();
      rmSync(runDir, { recursive: true, force: true });
    }
  });

  it('errors name the fix: no socket at the endpoint; a containerd without its CRI plugin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-cri-err-'));
    const runDir = join(dir, 'pods');
    try {
      await expect(createCriRuntime({ endpoint: `unix://${dir}/none.sock`, runDir })).rejects.toThrow(
        /no container runtime socket at unix:\/\/.*none\.sock: .*npm run cri:up.*--cri-endpoint/,
      );
      // A real gRPC server that serves no CRI, like Docker's containerd with disabled_plugins = ["cri"].
      const server = new grpc.Server();
      const sock = join(dir, 'nocri.sock');
      await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
      try {
        await expect(createCriRuntime({ endpoint: `unix://${sock}`, runDir })).rejects.toThrow(/does not serve the CRI.*disabled_plugins = \["cri"\]/);
      } finally {
        server.forceShutdown();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(dir)).toBe(false);
    expect(BUSYBOX).toBe('probelet.local/busybox:test');
  });
});
