/**
 * Probe targets on a simulated fleet answer as the fleet's behaviours say, for every handler,
 * in the kubelet's words: the parts `probelet node --runtime simulated --fleet` builds
 * (src/node/fleet/simulated-node.ts) under a real Kubelet, on a FakeClock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { admitPods } from '../../src/api/admit.js';
import type { Container, Pod } from '../../src/api/types.js';
import { createEventRecorder } from '../../src/kubelet/events.js';
import { Kubelet } from '../../src/kubelet/kubelet.js';
import { podBehaviours } from '../../src/node/fleet/behaviours.js';
import { parseFleet } from '../../src/node/fleet/fleet-file.js';
import { simulatedParts } from '../../src/node/fleet/simulated-node.js';
import { FakeClock } from '../../src/util/clock.js';

const FLEET = `apiVersion: probelet.dev/v1alpha1
kind: Fleet
pools: [{name: sim, count: 1}]
behaviours:
- match: {container: http-503}
  script: up
  probes: {readiness: "fail(503)"}
- match: {container: http-500, image: "example/*"}
  script: fail
- match: {container: http-down}
  script: down
- match: {container: http-slow}
  script: slow(3s)
- match: {container: http-late, namespace: "team-?"}
  script: slow(500ms)
- match: {container: http-redirect}
  script: redirect(http://login.example/)
- match: {container: tcp-*}
  script: down:2s,up
- match: {container: grpc-fail}
  script: fail
- match: {container: grpc-hang}
  script: hang
- match: {container: exec-fail}
  script: up:2s,fail
- match: {container: exits}
  script: up:1s,exit(3)
- match: {container: scoped, namespace: "team-?"}
  script: down
`;

const kubelets: Array<{ kubelet: Kubelet; clock: FakeClock }> = [];
afterEach(async () => {
  // Stopping pods waits for their grace periods and the probes in flight: on the fake clock.
  for (const { kubelet, clock } of kubelets.splice(0)) {
    let closed = false;
    const closing = kubelet.close().then(() => (closed = true));
    for (let i = 0; i < 100 && !closed; i++) await clock.advance(100);
    await closing;
  }
});

function podWith(container: Container, namespace = 'team-a'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: container.name, namespace, uid: `uid-${container.name}` },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, containers: [{ image: 'example/app:2', ...container }] },
  } as Pod;
}

const http = (port: number, timeoutSeconds = 1) => ({ httpGet: { path: '/ready', port }, periodSeconds: 1, timeoutSeconds, failureThreshold: 1 });

async function run(pods: Pod[], forMs: number) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1), { settle: 'microtasks' });
  const rules = parseFleet(FLEET, 'fleet.yaml').behaviours;
  const parts = simulatedParts(clock, 0, (pod) => podBehaviours(rules, 'probelet.dev/behaviour', pod).behaviours);
  const recorder = createEventRecorder({ clock, host: 'sim-0' });
  const kubelet = new Kubelet({ runtime: parts.runtime, clock, random: () => 0.5, recorder, prober: parts.prober(recorder), lifecycleHandlers: parts.lifecycleHandlers, relistPhaseMs: 0, admit: admitPods });
  kubelets.push({ kubelet, clock });
  expect(kubelet.addPods(pods).errors).toEqual([]);
  for (let t = 0; t < forMs; t += 250) await clock.advance(250);
  const events = (name: string): string[] =>
    kubelet
      .listEvents()
      .filter((e) => e.involvedObject?.name === name)
      .map((e) => `${e.reason}: ${e.message}`);
  const pod = (name: string): Pod | undefined => kubelet.listPods().find((p) => p.metadata?.name === name);
  return { events, pod };
}

const ready = (p: Pod | undefined): boolean => p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

describe('probe targets of a fleet answer as its behaviours say, in the kubelet’s words', () => {
  it('HTTP: status codes, refused connections, delays past and within the timeout, redirects', async () => {
    const { events, pod } = await run(
      [
        podWith({ name: 'http-503', readinessProbe: http(8080) }),
        podWith({ name: 'http-500', readinessProbe: http(8080) }),
        podWith({ name: 'http-down', readinessProbe: http(8080) }),
        podWith({ name: 'http-slow', readinessProbe: http(8080) }),
        podWith({ name: 'http-late', readinessProbe: http(8080) }),
        podWith({ name: 'http-redirect', readinessProbe: http(8080) }),
      ],
      4_000,
    );
    expect(events('http-503')).toContain('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503');
    expect(events('http-500')).toContain('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 500');
    expect(events('http-down')).toContain('Unhealthy: Readiness probe failed: Get "http://127.0.0.1:8080/ready": dial tcp 127.0.0.1:8080: connect: connection refused');
    expect(events('http-slow')).toContain(
      'Unhealthy: Readiness probe failed: Get "http://127.0.0.1:8080/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    );
    expect(events('http-redirect')).toContain('ProbeWarning: Readiness probe warning: Probe terminated redirects, Response body: <a href="http://login.example/">Found</a>.\n\n');
    for (const name of ['http-503', 'http-500', 'http-down', 'http-slow']) expect(ready(pod(name)), name).toBe(false);
    // 500 ms within a 1 s timeout: a success, late.
    expect(ready(pod('http-late'))).toBe(true);
    expect(events('http-late').filter((e) => e.startsWith('Unhealthy'))).toEqual([]);
    expect(ready(pod('http-redirect'))).toBe(true);
    // A fleet's node has every image: the kubelet's start events, Pulled as for an image already there.
    expect(events('http-late').slice(0, 3)).toEqual([
      'Pulled: Container image "example/app:2" already present on machine and can be accessed by the pod',
      'Created: Container created',
      'Started: Container started',
    ]);
  });

  it('TCP, gRPC and exec', async () => {
    const { events, pod } = await run(
      [
        podWith({ name: 'tcp-a', readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 1, failureThreshold: 1 } }),
        podWith({ name: 'grpc-fail', readinessProbe: { grpc: { port: 9090 }, periodSeconds: 1, failureThreshold: 1 } }),
        podWith({ name: 'grpc-hang', readinessProbe: { grpc: { port: 9090 }, periodSeconds: 2, timeoutSeconds: 1, failureThreshold: 1 } }),
        podWith({ name: 'exec-fail', livenessProbe: { exec: { command: ['check'] }, periodSeconds: 1, failureThreshold: 1 } }),
      ],
      5_000,
    );
    expect(events('tcp-a')).toContain('Unhealthy: Readiness probe failed: dial tcp 127.0.0.1:9000: connect: connection refused');
    expect(ready(pod('tcp-a'))).toBe(true);
    expect(events('grpc-fail')).toContain('Unhealthy: Readiness probe failed: service unhealthy (responded with "NOT_SERVING")');
    expect(events('grpc-hang')).toContain('Unhealthy: Readiness probe failed: timeout: health rpc did not complete within 1s');
    expect(events('exec-fail')).toContain('Unhealthy: Liveness probe failed: simulated: fail\n');
    expect(events('exec-fail')).toContain('Killing: Container exec-fail failed liveness probe, will be restarted');
  });

  it('exit codes: a container whose script exits is restarted with its exit code in lastState', async () => {
    const { pod } = await run([podWith({ name: 'exits' })], 3_000);
    const status = pod('exits')?.status?.containerStatuses?.[0];
    expect(status?.restartCount).toBeGreaterThanOrEqual(1);
    expect(status?.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it('a pod outside the match (namespace) plays up: the fleet’s selectors decide', async () => {
    const inTeam = await run([podWith({ name: 'scoped', readinessProbe: http(8080) }, 'team-b')], 2_000);
    expect(ready(inTeam.pod('scoped'))).toBe(false);
    const outside = await run([podWith({ name: 'scoped', readinessProbe: http(8080) }, 'prod')], 2_000);
    expect(ready(outside.pod('scoped'))).toBe(true);
    expect(outside.events('scoped').filter((e) => e.startsWith('Unhealthy'))).toEqual([]);
  });
});
