/**
 * explain reads the kubelet's own event messages: every message the real kubelet recorded in
 * the oracle's golden files (test/oracle/golden, recorded from kubelet v1.35) is read the way
 * its words mean, so the patterns cannot drift from what a cluster shows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isKubeletLogNotice, readBackOffStep, readImagePull, readKilling, readUnhealthy } from '../../src/explain/kubelet-words.js';

const GOLDEN = new URL('../oracle/golden/', import.meta.url);

interface GoldenEvent {
  reason: string;
  message: string;
}

function goldenEvents(): GoldenEvent[] {
  return readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => (JSON.parse(readFileSync(new URL(f, GOLDEN), 'utf8')) as { events: GoldenEvent[] }).events);
}

describe('the real kubelet\'s words', () => {
  const events = goldenEvents();

  it('every Killing message of the golden files has a known cause', () => {
    const kills = events.filter((e) => e.reason === 'Killing');
    expect(kills.length).toBeGreaterThan(5);
    for (const e of kills) expect(readKilling(e.message).cause, e.message).not.toBe('other');
    expect(readKilling('Container app failed liveness probe, will be restarted')).toEqual({ cause: 'liveness', container: 'app', willRestart: true });
    expect(readKilling('Container app failed startup probe, will be restarted').cause).toBe('startup');
    expect(readKilling('Init container sidecar failed liveness probe')).toEqual({ cause: 'liveness', container: 'sidecar', willRestart: true });
    expect(readKilling('Stopping container app').cause).toBe('deletion');
  });

  it('every Unhealthy message of the golden files is read, with the kind its output shows', () => {
    const unhealthy = events.filter((e) => e.reason === 'Unhealthy');
    expect(unhealthy.length).toBeGreaterThan(10);
    for (const e of unhealthy) expect(readUnhealthy(e.message), e.message).toBeDefined();
    expect(readUnhealthy('Liveness probe failed: HTTP probe failed with statuscode: 500')).toMatchObject({ probe: 'liveness', kind: 'http-status', statusCode: 500, errored: false });
    expect(readUnhealthy('Liveness probe failed: dial tcp 127.0.0.1:1: connect: connection refused')?.kind).toBe('refused');
    expect(readUnhealthy('Liveness probe failed: Get "http://10.0.0.1:8080/healthz": dial tcp 10.0.0.1:8080: connect: connection refused')?.kind).toBe('refused');
    expect(readUnhealthy('Liveness probe failed: Get "http://10.0.0.1:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)')?.kind).toBe('timeout');
    expect(readUnhealthy('Liveness probe failed: command timed out: "sh -c sleep 5" timed out after 1s')?.kind).toBe('timeout');
    expect(readUnhealthy('Readiness probe failed: service unhealthy (responded with "NOT_SERVING")')?.kind).toBe('grpc');
    expect(readUnhealthy('Liveness probe failed: ')).toMatchObject({ kind: 'exec', output: '' });
    expect(readUnhealthy('(combined from similar events): Readiness probe failed: HTTP probe failed with statuscode: 503')).toMatchObject({ probe: 'readiness', statusCode: 503 });
    expect(readUnhealthy('Liveness probe errored and resulted in unknown state: rpc error: code = NotFound')?.errored).toBe(true);
    expect(readUnhealthy('Back-off restarting failed container')).toBeUndefined();
  });

  it('reads image pulls and the back-off step', () => {
    expect(readImagePull('Failed to pull image "x:1": rpc error: code = NotFound desc = not found')).toEqual({ image: 'x:1', detail: 'rpc error: code = NotFound desc = not found' });
    expect(readImagePull('Back-off pulling image "x:1"')).toEqual({ image: 'x:1' });
    expect(readBackOffStep('back-off 40s restarting failed container=app pod=web_default(uid)')).toBe(40);
    expect(readBackOffStep('back-off 2m40s restarting failed container=app pod=web_default(uid)')).toBe(160);
    expect(readBackOffStep('back-off 5m0s restarting failed container=app pod=web_default(uid)')).toBe(300);
  });

  it('the notices the kubelet serves with status 200 in place of a log are not log lines (seen on kubelet v1.35 for a deleted instance and a removed file)', () => {
    expect(isKubeletLogNotice('unable to retrieve container logs for containerd://9b71a93c0c3aaa814f64966905383cf4eabf4ff43a2e1137dd75b16c332435b8')).toBe(true);
    expect(isKubeletLogNotice('unable to retrieve container logs for containerd://0b5fc8e4dcfailed to try resolving symlinks in path "/var/log/pods/ns_crash_u/crash/1.log": lstat /var/log/pods/ns_crash_u: no such file or directory')).toBe(true);
    expect(isKubeletLogNotice('failed to try resolving symlinks in path "/var/log/pods/ns_p_u/app/0.log": lstat /var/log/pods/ns_p_u/app/0.log: no such file or directory\n')).toBe(true);
    // An app that happens to print one of those among other lines is the app's log.
    expect(isKubeletLogNotice('starting\nunable to retrieve container logs for containerd://x\n')).toBe(false);
    expect(isKubeletLogNotice('fatal: no config at /etc/app.conf\n')).toBe(false);
    expect(isKubeletLogNotice('')).toBe(false);
  });
});
