/**
 * `--verify`: the fix of a diagnosis simulated on the kubelet's own code (simulate/) with a
 * behaviour fitted to what was observed — as it is, the restarts come back; with the fix, none.
 */
import { describe, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { Pod } from '../../src/api/types.js';
import { explainPod } from '../../src/explain/explain.js';
import { formatVerification, mergeContainer, verifyDiagnosis } from '../../src/explain/verify.js';

const T0 = Date.parse('2026-11-29T00:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace(/\.000Z$/, 'Z');
const ev = (reason: string, message: string, first: number, last: number, count: number) => ({
  apiVersion: 'v1',
  kind: 'Event',
  involvedObject: { kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u1', fieldPath: 'spec.containers{app}' },
  reason,
  message,
  count,
  firstTimestamp: at(first),
  lastTimestamp: at(last),
});

function pod(probe: object, lastAge: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
    spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'api:1', command: ['app'], livenessProbe: probe }] },
    status: { containerStatuses: [{ name: 'app', image: 'api:1', imageID: '', ready: false, restartCount: 2, state: { running: { startedAt: at(200) } }, lastState: { terminated: { exitCode: 143, reason: 'Error', startedAt: at(100), finishedAt: at(100 + lastAge) } } }] },
  };
}

describe('explain --verify', () => {
  it('slow start: as it is killed again and again; with the startupProbe of the fix, no restart', async () => {
    const p = pod({ httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10, failureThreshold: 3 }, 31);
    const events = [ev('Started', 'Container started', 0, 200, 3), ev('Unhealthy', 'Liveness probe failed: dial tcp 10.0.0.5:8080: connect: connection refused', 10, 130, 9), ev('Killing', 'Container app failed liveness probe, will be restarted', 31, 131, 2)];
    const d = explainPod(p, events, { nowMs: T0 + 205_000 }).diagnoses[0];
    expect(d?.cause).toBe('slow-start-liveness');
    if (!d) return;
    const v = await verifyDiagnosis(setPodDefaults(p), d);
    if (typeof v === 'string') throw new Error(v);
    expect(v.behaviour).toBe('down:40s,up');
    expect(v.asIs.restarts).toBeGreaterThan(2);
    expect(v.fixed).toMatchObject({ restarts: 0 });
    expect(v.fixed.readyAtSeconds).toBeGreaterThanOrEqual(40);
    expect(v.agrees).toBe(true);
    expect(formatVerification(v)).toContain('the simulation agrees with the diagnosis');
  });

  it('liveness timeouts: probes answering in 3 s kill with timeoutSeconds 1, not with 5', async () => {
    const p = pod({ httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 1 }, 31);
    const msg = 'Liveness probe failed: Get "http://10.0.0.5:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
    const events = [ev('Started', 'Container started', 0, 200, 3), ev('Unhealthy', msg, 10, 130, 9), ev('Killing', 'Container app failed liveness probe, will be restarted', 31, 131, 2)];
    const d = explainPod(p, events, { nowMs: T0 + 205_000 }).diagnoses[0];
    expect(d?.cause).toBe('liveness-timeout');
    if (!d) return;
    const v = await verifyDiagnosis(setPodDefaults(p), d);
    if (typeof v === 'string') throw new Error(v);
    expect(v.behaviour).toBe('liveness=slow(3s)');
    expect(v.asIs.restarts).toBeGreaterThan(0);
    expect(v.fixed.restarts).toBe(0);
  });

  it('a cause whose fix is no timing has nothing to simulate', async () => {
    const p = pod({ httpGet: { path: '/healthz', port: 8081 }, periodSeconds: 10, failureThreshold: 3 }, 31);
    p.spec = { ...p.spec, containers: [{ ...(p.spec?.containers[0] ?? { name: 'app' }), ports: [{ containerPort: 8080 }] }] };
    const events = [ev('Unhealthy', 'Liveness probe failed: dial tcp 10.0.0.5:8081: connect: connection refused', 10, 130, 9), ev('Killing', 'Container app failed liveness probe, will be restarted', 31, 131, 2)];
    const d = explainPod(p, events, { nowMs: T0 + 205_000 }).diagnoses[0];
    expect(d?.cause).toBe('probe-wrong-target');
    if (!d) return;
    expect(await verifyDiagnosis(setPodDefaults(p), d)).toContain('nothing to simulate');
  });

  it('merges a patch as a strategic merge patch does for these fields', () => {
    expect(mergeContainer({ name: 'app', livenessProbe: { httpGet: { path: '/h', port: 1 }, periodSeconds: 3 } }, { name: 'app', livenessProbe: { httpGet: { port: 2 } } })).toEqual({ name: 'app', livenessProbe: { httpGet: { path: '/h', port: 2 }, periodSeconds: 3 } });
  });
});
