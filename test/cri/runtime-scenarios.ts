/**
 * The runtime below and with the kubelet, for every runtime that runs images (target.ts):
 * exec (exit code, output, timeout → the runner's TimeoutError), PID namespaces, the image's
 * entrypoint for a container without `command`, the log layout, host network, image pulls that
 * fail (ErrImagePull → ImagePullBackOff), a container removed behind the kubelet's back.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { current, eventsWith, freePort, run, statusOf, until, waitEvent, waitRunning } from '../e2e/helpers.js';
import { aliveWithMarker } from '../helpers/processes.js';
import { starveCpu } from '../helpers/cgroups.js';
import { bb, httpd, pod, sh } from './helpers.js';
import type { RuntimeTarget } from './target.js';

export function runtimeScenarios(t: RuntimeTarget): void {
  afterEach(async ({ task }) => {
    await t.stop(task.id);
  });

  t.describe(`${t.name}: the runtime`, () => {
    it.concurrent('ExecSync passes exit code and output (stdout then stderr) through, with env and workingDir; a timeout is the runner TimeoutError; logs read back', async ({ task }) => {
      const h = await t.start(task.id);
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

    it.concurrent("ExecSync's timeout bounds the command's own run: a command that closed its output and runs on times out; in a container starved of CPU, the runtime's seconds starting the process do not count", async ({ task }) => {
      const h = await t.start(task.id);
      run(h, pod('starved', [bb(h, 'c', sh('echo ok >/tmp/ok; exec sleep 600'))], { terminationGracePeriodSeconds: 2 }));
      const id = (await waitRunning(h, 'starved', 'c')).containerID ?? '';
      expect(await h.runtime.execSync(id, ['cat', '/tmp/ok'], 5000)).toEqual({ exitCode: 0, output: 'ok\n' });
      // The end of its output is not the end of the command (containerd waits for the process).
      const closed = await h.runtime.execSync(id, sh('exec >&- 2>&-; sleep 5'), 1000).catch((e: unknown) => e);
      expect(closed).toMatchObject({ name: 'TimeoutError', message: 'command timed out: "sh -c exec >&- 2>&-; sleep 5" timed out after 1s' });
      // 0.5% of a CPU: the runtime's start of an exec'd process (runc init runs in the container's
      // cgroup) takes 5–7 s here, `cat` itself under half a second. containerd starts the timeout
      // once the process started, so the kubelet's probe succeeds.
      const [main] = await until(() => {
        const found = aliveWithMarker(h.marker);
        return found.length > 0 ? found : undefined;
      }, 10_000);
      starveCpu(main?.pid ?? 0, 1_000, 200_000);
      expect(await h.runtime.execSync(id, ['cat', '/tmp/ok'], 2000)).toEqual({ exitCode: 0, output: 'ok\n' });
    });

    it.concurrent('each container has a PID namespace of its own (its process is PID 1, not pause) unless shareProcessNamespace; ExecSync on an exited container errors in the kubelet\'s words', async ({ task }) => {
      const h = await t.start(task.id);
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
      // The runtime's error in the kubelet's words; a Never pod that completed may already have had
      // its containers removed by the time the exec is sent (seen once under load): then the
      // runtime's own "not found", never a crash or a success.
      expect((err as Error).message).toMatch(/^rpc error: code = \w+ desc = |^container "[^"]+" not found$/);
    });

    it.concurrent('a container without command runs the image CMD; args are $(VAR)-expanded; logs follow <pod dir>/<container>/<attempt>.log', async ({ task }) => {
      const h = await t.start(task.id);
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
      expect(t.logLines(logFile)).toEqual([t.logLine('stdout', 'hello-world'), t.logLine('stderr', 'oops')].sort());
      expect(admitted?.metadata?.name).toBe('entry');
    });

    it.concurrent('hostNetwork: the pod IP is the node’s and a probe reaches the container on 127.0.0.1', async ({ task }) => {
      const h = await t.start(task.id);
      const port = await freePort();
      run(h, pod('hostnet', [bb(h, 'c', httpd(port), { readinessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 1 } })], { hostNetwork: true, terminationGracePeriodSeconds: 2 }));
      await until(() => (current(h, 'hostnet')?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined), 15_000);
      expect(current(h, 'hostnet')?.status?.podIP).toBe('127.0.0.1');
    });

    it.concurrent('a missing image: Pulling, Failed (ErrImagePull), then ImagePullBackOff with its own back-off; Never → ErrImageNeverPull', async ({ task }) => {
      const h = await t.start(task.id);
      const image = 'probelet.local/missing:1';
      run(
        h,
        pod('pull', [bb(h, 'c', ['sleep', '600'], { image })]),
        pod('never', [bb(h, 'c', ['sleep', '600'], { image, imagePullPolicy: 'Never' })]),
      );
      await waitEvent(h, 'pull', 'Pulling', `Pulling image "${image}"`, 10_000);
      const failed = await waitEvent(h, 'pull', 'Failed', `Failed to pull image "${image}": `, 10_000);
      expect(failed.type).toBe('Warning');
      if (t.importHint !== undefined) expect(failed.message).toContain(t.importHint);
      // The kubelet's event holds the runtime's words and nothing else: a gRPC status of its
      // own code (`rpc error: code = NotFound desc = …`), or for code Unknown the message alone.
      else expect(failed.message).toMatch(/^Failed to pull image "[^"]+": (rpc error: code = (?!Unknown)\w+ desc = )?failed to pull and unpack image /);
      await waitEvent(h, 'pull', 'Failed', 'Error: ErrImagePull', 10_000);
      await waitEvent(h, 'pull', 'BackOff', `Back-off pulling image "${image}"`, 10_000);
      await waitEvent(h, 'pull', 'Failed', 'Error: ImagePullBackOff', 10_000);
      // Within the 10 s back-off it does not pull again.
      expect(eventsWith(h, 'pull', 'Pulling', '')[0]?.count ?? 1).toBe(1);
      // The status shows it from the next sync on (the pod worker's requeue, 10–15 s), as the kubelet's reasonCache does.
      await until(() => (statusOf(current(h, 'pull'), 'c')?.state?.waiting?.reason === 'ImagePullBackOff' ? true : undefined), 20_000);
      await waitEvent(h, 'never', 'ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`, 10_000);
      expect(statusOf(current(h, 'never'), 'c')?.state?.waiting?.reason).toBe('ErrImageNeverPull');
    });

    it.concurrent('a running container removed behind the kubelet’s back: ContainerStatusUnknown, exit 137, then restarted', async ({ task }) => {
      const h = await t.start(task.id);
      run(h, pod('gone', [bb(h, 'c', ['sleep', '600'])], { terminationGracePeriodSeconds: 1 }));
      const id = (await waitRunning(h, 'gone', 'c')).containerID?.slice(t.idScheme.length) ?? '';
      await t.removeBehindBack(id);
      const last = await until(() => statusOf(current(h, 'gone'), 'c')?.lastState?.terminated, 15_000);
      expect(last).toMatchObject({ exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was deleted.  The container used to be Running' });
      await until(() => (statusOf(current(h, 'gone'), 'c')?.state?.running ? true : undefined), 15_000);
      expect(statusOf(current(h, 'gone'), 'c')?.restartCount).toBe(1);
    });
  });
}
