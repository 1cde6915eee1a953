/**
 * `probelet run examples/cri/deployment.yaml` on the Docker runtime and on the CRI runtime, side
 * by side: the same pod (named as the Deployment controller names it, Ready on a pod IP of the
 * runtime's bridge), the same liveness failure and restart, and the same kubelet events in the
 * same order — the runtime underneath is not something a user of the kubelet sees.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { exitCode, runPods, scratch, startRun, type RunChild, type Scratch } from '../cli/run-child.js';
import { CRI_ENDPOINT, criUnavailable, describeWhen } from '../cri/helpers.js';
import { DOCKER_HOST, dockerUnavailable } from './helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/cri/deployment.yaml', import.meta.url));

const scratches: Scratch[] = [];
afterEach(() => {
  for (const sc of scratches.splice(0)) sc.cleanup();
});

interface Seen {
  events: { reason: string; message: string }[];
  pods: Pod[];
}

function seen(stdout: string): Seen {
  // The pod at every change: `pod` lines and the `containerStatus` lines after them.
  const out: Seen = { events: [], pods: runPods(stdout) };
  for (const line of stdout.split('\n')) {
    if (line.startsWith('{"type":"event"')) {
      const { event } = JSON.parse(line) as { event: { reason?: string; message?: string } };
      out.events.push({ reason: event.reason ?? '', message: event.message ?? '' });
    }
  }
  return out;
}

/** The kubelet's lifecycle events in order, each once (probe failures repeat with timing; their wording is compared apart). */
function lifecycle(s: Seen): string[] {
  return s.events.filter((e) => ['Pulled', 'Created', 'Started', 'Killing'].includes(e.reason)).map((e) => `${e.reason}: ${e.message}`);
}

const restarted = (out: string): boolean => seen(out).pods.some((p) => p.status?.containerStatuses?.[0]?.restartCount === 1 && p.status.containerStatuses[0].state?.running !== undefined);

describeWhen('docker and cri: the same run of examples/cri/deployment.yaml', () => {
  it('same pod, probes, events and restart on both runtimes', async () => {
    const start = (runtime: string[]): RunChild => {
      const sc = scratch();
      scratches.push(sc);
      return startRun(sc, [EXAMPLE, ...runtime, '--listen', '127.0.0.1:0', '-o', 'json']);
    };
    const docker = start(['--runtime', 'docker', '--docker-host', DOCKER_HOST]);
    const cri = start(['--runtime', 'cri', '--cri-endpoint', CRI_ENDPOINT]);
    // /healthz goes 20 s after start; two failed liveness probes 3 s apart → Killing → restart.
    await Promise.all([docker.waitForStdout(restarted, 60_000), cri.waitForStdout(restarted, 60_000)]);
    const [d, c] = [seen(docker.stdout()), seen(cri.stdout())];
    for (const s of [d, c]) {
      const ready = s.pods.find((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
      expect(ready?.metadata?.name).toMatch(/^web-[a-z0-9]{8,10}-[a-z0-9]{5}$/);
      expect(ready?.status?.podIP).toMatch(/^169\.254\.\d+\.\d+$/);
      expect(s.events.map((e) => e.message)).toContain('Liveness probe failed: HTTP probe failed with statuscode: 404');
    }
    expect(lifecycle(d)).toEqual(lifecycle(c));
    expect(lifecycle(d)).toEqual([
      'Pulled: Container image "probelet.local/busybox:test" already present on machine and can be accessed by the pod',
      'Created: Container created',
      'Started: Container started',
      'Killing: Container httpd failed liveness probe, will be restarted',
      'Pulled: Container image "probelet.local/busybox:test" already present on machine and can be accessed by the pod',
      'Created: Container created',
      'Started: Container started',
    ]);
    docker.child.kill('SIGINT');
    cri.child.kill('SIGINT');
    expect(await Promise.all([exitCode(docker, 30_000), exitCode(cri, 30_000)])).toEqual([0, 0]);
  }, 100_000);
}, criUnavailable() ?? dockerUnavailable(), 'PROBELET_REQUIRE_DOCKER', 'containerd and a Docker daemon');
