import { describe, expect, it } from 'vitest';
import { setPodDefaults, setProbeDefaults } from '../../src/api/defaults.js';
import type { Pod } from '../../src/api/types.js';

describe('setProbeDefaults (catalog V16)', () => {
  it('V16: {exec} gets timeout 1, period 10, success 1, failure 3, initialDelay stays 0', () => {
    const probe = { exec: { command: ['true'] } };
    const out = setProbeDefaults(probe);
    expect(out).toEqual({
      exec: { command: ['true'] },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(out.initialDelaySeconds ?? 0).toBe(0);
    expect(probe).toEqual({ exec: { command: ['true'] } });
  });

  it('V16: {httpGet: {port: 80}} gets path / and scheme HTTP', () => {
    const out = setProbeDefaults({ httpGet: { port: 80 } });
    expect(out.httpGet).toEqual({ port: 80, path: '/', scheme: 'HTTP' });
  });

  it('V16: {grpc: {port: 9000}} gets service ""', () => {
    expect(setProbeDefaults({ grpc: { port: 9000 } }).grpc).toEqual({ port: 9000, service: '' });
  });

  it('replaces only zero values, and never defaults the probe grace period', () => {
    const out = setProbeDefaults({
      tcpSocket: { port: 1 },
      timeoutSeconds: 5,
      periodSeconds: 0,
      successThreshold: 2,
      failureThreshold: 7,
      initialDelaySeconds: 3,
    });
    expect(out).toMatchObject({ timeoutSeconds: 5, periodSeconds: 10, successThreshold: 2, failureThreshold: 7 });
    expect(out.initialDelaySeconds).toBe(3);
    expect(out.terminationGracePeriodSeconds).toBeUndefined();
    expect(setProbeDefaults({ httpGet: { port: 1, path: '/x', scheme: 'HTTPS' } }).httpGet).toMatchObject({
      path: '/x',
      scheme: 'HTTPS',
    });
    expect(setProbeDefaults({ grpc: { port: 1, service: 'svc' } }).grpc?.service).toBe('svc');
  });
});

function samplePod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'nginx',
          ports: [{ containerPort: 8080 }],
          livenessProbe: { httpGet: { port: 8080 } },
          lifecycle: { preStop: { httpGet: { port: 8080 } } },
        },
      ],
      initContainers: [
        { name: 'setup', image: 'busybox:1.36', command: ['true'] },
        { name: 'sidecar', image: 'envoy@sha256:abc', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 9 } } },
      ],
      ephemeralContainers: [{ name: 'debug', image: 'busybox:latest', readinessProbe: { exec: { command: ['x'] } } }],
    },
  };
}

describe('setPodDefaults', () => {
  it('defaults pod-level fields and namespace', () => {
    const out = setPodDefaults(samplePod());
    expect(out.metadata?.namespace).toBe('default');
    expect(out.spec?.restartPolicy).toBe('Always');
    expect(out.spec?.terminationGracePeriodSeconds).toBe(30);
    expect(out.spec?.dnsPolicy).toBe('ClusterFirst');
  });

  it('keeps set values, including a zero grace period', () => {
    const pod = samplePod();
    pod.metadata = { name: 'web', namespace: 'prod' };
    pod.spec = { ...pod.spec!, restartPolicy: 'Never', terminationGracePeriodSeconds: 0 };
    const out = setPodDefaults(pod);
    expect(out.metadata?.namespace).toBe('prod');
    expect(out.spec?.restartPolicy).toBe('Never');
    expect(out.spec?.terminationGracePeriodSeconds).toBe(0);
  });

  it('defaults probes of regular, init (sidecar) and ephemeral containers, and lifecycle httpGet', () => {
    const out = setPodDefaults(samplePod());
    const app = out.spec!.containers[0]!;
    expect(app.livenessProbe).toEqual({
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(app.lifecycle?.preStop?.httpGet).toEqual({ port: 8080, path: '/', scheme: 'HTTP' });
    expect(out.spec!.initContainers![1]!.startupProbe).toMatchObject({ periodSeconds: 10, failureThreshold: 3 });
    expect(out.spec!.ephemeralContainers![0]!.readinessProbe).toMatchObject({ timeoutSeconds: 1, successThreshold: 1 });
  });

  it('defaults container fields like the apiserver stores them', () => {
    const out = setPodDefaults(samplePod());
    const [app] = out.spec!.containers;
    expect(app).toMatchObject({
      imagePullPolicy: 'Always',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
    expect(app!.ports).toEqual([{ containerPort: 8080, protocol: 'TCP' }]);
    expect(out.spec!.initContainers![0]!.imagePullPolicy).toBe('IfNotPresent');
    expect(out.spec!.initContainers![1]!.imagePullPolicy).toBe('IfNotPresent');
    expect(out.spec!.ephemeralContainers![0]!.imagePullPolicy).toBe('Always');
  });

  it('does not mutate its input', () => {
    const pod = samplePod();
    const before = structuredClone(pod);
    const out = setPodDefaults(pod);
    expect(pod).toEqual(before);
    expect(out).not.toBe(pod);
    out.spec!.containers[0]!.name = 'changed';
    expect(pod.spec!.containers[0]!.name).toBe('app');
  });

  it('copes with a pod that has no spec or metadata', () => {
    expect(setPodDefaults({ apiVersion: 'v1', kind: 'Pod' })).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default' },
      spec: { containers: [], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst' },
    });
  });
});
