/**
 * `probelet run --runtime docker` as a real child process on a real daemon (Docker Engine,
 * Podman's service): Ready on its pod IP; SIGINT, SIGTERM and SIGHUP (graceful) and a second
 * Ctrl-C (forced) each leave no container, volume or process behind; a SIGKILL of probelet
 * leaves its pods to the next start, which removes them. The signal scenario is every
 * runtime's (test/cli/run-signals.ts); what a pod holds on a daemon is checked here.
 */
import { afterEach, expect, it } from 'vitest';
import { PID_LABEL } from '../../src/runtime/cri/pod-config.js';
import { exitCode, nothingLeft, readyPod, scratch, startRun, type Scratch } from '../cli/run-child.js';
import { signalStop, type RunRuntime } from '../cli/run-signals.js';
import { httpdDeployment } from '../helpers/httpd-deployment.js';
import type { DockerConnection } from '../../src/runtime/docker/docker-host.js';
import type { RuntimeTarget } from '../cri/target.js';
import { leftInDaemon } from './helpers.js';

/** The daemon the scenarios run on: its name, its address as --docker-host takes it, and its suite. */
export interface DaemonUnderTest {
  name: string;
  host: string;
  connection: DockerConnection;
  describe: RuntimeTarget['describe'];
}

export function shutdownScenarios(d: DaemonUnderTest): void {
  let s: Scratch | undefined;
  afterEach(() => {
    s?.cleanup();
    s = undefined;
  });

  function args(file: string): string[] {
    return [file, '--runtime', 'docker', '--docker-host', d.host, '--listen', '127.0.0.1:0', '-o', 'json'];
  }
  const leftIn = (pid: number): Promise<string[]> => leftInDaemon(String(pid), PID_LABEL, d.connection);
  const docker: RunRuntime = {
    args,
    wwwVolume: true,
    leftIn,
    whileReady: (listed) => {
      // Two containers of the pod and its web root, a named volume.
      expect(listed.filter((x) => x.startsWith('container'))).toHaveLength(2);
      expect(listed.filter((x) => x.startsWith('volume'))).toHaveLength(1);
      return undefined;
    },
    readyMs: 30_000,
    exitMs: 30_000,
  };

  d.describe(`${d.name}: probelet run --runtime docker, stopped by signals`, () => {
    for (const [signal, forced] of [['SIGINT', false], ['SIGTERM', false], ['SIGHUP', false], ['SIGINT', true]] as const) {
      it(`${forced ? 'a second Ctrl-C (kill at once)' : signal}: Ready on the pod IP, then no container, volume or process left`, async () => {
        s = scratch();
        await signalStop(s, docker, signal, forced);
      }, 60_000);
    }

    it('SIGKILL: the pods stay until the next probelet start on the daemon, which removes them', async () => {
      s = scratch();
      const file = s.manifest('deploy.yaml', httpdDeployment(s, 'web', { ignoresTerm: false, wwwVolume: true }));
      const killed = startRun(s, args(file));
      await killed.waitForStdout((out) => readyPod(out) !== undefined, 30_000);
      const pid = killed.child.pid ?? 0;
      killed.child.kill('SIGKILL');
      await exitCode(killed, 10_000);
      expect((await leftIn(pid)).length).toBe(3);

      const next = startRun(s, [...args(file), '--exit-on-ready', '--timeout', '40s']);
      expect(await exitCode(next, 50_000), next.stderr()).toBe(0);
      expect(await leftIn(pid)).toEqual([]);
      expect(await leftIn(next.child.pid ?? 0)).toEqual([]);
      expect(await nothingLeft(s.marker)).toBe(true);
    }, 90_000);
  });
}
