/**
 * `probelet explain` on incidents the REAL kubelet produced (`npm run cluster:up`: kubelet
 * v1.35 built from source, on its own containerd): one pod per cause, all at once in a
 * namespace of this file's own, each bound to the kubelet's node (the incidents and how they
 * are read: incidents.ts). When a pod's incident has happened, `explain` (the CLI's function,
 * live through the API) must name the cause with the kubelet's numbers; the same pod and events
 * saved as JSON must give the same answer offline (`-f --events`).
 *
 * Skipped without a cluster (the reason in the suite's name); failing instead under
 * PROBELET_REQUIRE_CLUSTER=1. PROBELET_EXPLAIN_RECORD=1 writes the slow-start incident's pod and
 * events to examples/explain/ (the README's example) and what explain said live to
 * test/fixtures/explain/ (what test/explain/offline.test.ts holds offline to, without a cluster).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setPodDefaults } from '../../src/api/defaults.js';
import type { Container, Pod } from '../../src/api/types.js';
import { failureWindow, startupGuard } from '../../src/check/budgets.js';
import { runCheck } from '../../src/cli/check/check.js';
import type { Diagnosis } from '../../src/explain/diagnose.js';
import { mergeContainer, verifyDiagnosis, type Verification } from '../../src/explain/verify.js';
import { plain, type KubeClients } from '../../src/node/kube.js';
import { expectValidSarif, type SarifLog } from '../check/sarif.js';
import { clusterClients, describeCluster, testNamespace, until } from '../node/helpers.js';
import { appDiagnosis, incidentPod, restarts, startIncidentServers, status, type IncidentPorts, type IncidentRun, runIncidents, INCIDENTS } from './incidents.js';

const NODE = process.env.PROBELET_CLUSTER_NODE ?? 'probelet-kubelet';
const EXAMPLE = new URL('../../examples/explain/', import.meta.url);
const FIXTURES = new URL('../fixtures/explain/', import.meta.url);

describeCluster('explain on incidents of the real kubelet', () => {
  const suffix = randomBytes(3).toString('hex');
  const namespace = `explain-${suffix}`;
  let clients: KubeClients;
  let ns: ReturnType<typeof testNamespace>;
  let closeServers = (): void => undefined;
  const kubeconfig = process.env.KUBECONFIG?.split(':')[0] ?? '';
  let ports: IncidentPorts;
  let run: IncidentRun | undefined;

  /** The probe causes whose fix is applied to a new pod; `until`: what shows the fixed pod got past the trouble. */
  const FIXED: { name: string; windowMs: number; until: (p: Pod) => boolean }[] = [
    { name: 'slow-start', windowMs: 45_000, until: (p) => status(p)?.started === true },
    { name: 'startup-short', windowMs: 45_000, until: (p) => status(p)?.started === true },
    { name: 'wrong-port', windowMs: 20_000, until: (p) => status(p)?.state?.running !== undefined },
    { name: 'liveness-timeout', windowMs: 20_000, until: (p) => status(p)?.state?.running !== undefined },
  ];
  const fixed = new Map<string, { restarts: number; verified: Verification | string } | Error>();

  beforeAll(async () => {
    clients = clusterClients();
    await clients.core.readNode({ name: NODE });
    ns = testNamespace(clients, namespace);
    await ns.create();
    await until('the default service account', async () => ((await clients.core.readNamespacedServiceAccount({ name: 'default', namespace }).catch(() => undefined)) ? true : undefined), 60_000);
    const servers = await startIncidentServers();
    closeServers = servers.close;
    ports = servers.ports;
    run = await runIncidents({
      clients,
      kubeconfig,
      namespace,
      node: NODE,
      ports,
      // crashed-once is previous-logs.test.ts's.
      names: Object.keys(INCIDENTS).filter((name) => name !== 'crashed-once'),
      record: (name, live) => {
        if (name !== 'slow-start' || process.env.PROBELET_EXPLAIN_RECORD !== '1') return;
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(new URL('slow-start-pod.json', EXAMPLE), `${JSON.stringify(live.pod, null, 1)}\n`);
        writeFileSync(new URL('slow-start-events.json', EXAMPLE), `${JSON.stringify(live.events, null, 1)}\n`);
        writeFileSync(new URL('slow-start.explain.json', FIXTURES), `${JSON.stringify(live.report, null, 1)}\n`);
      },
    });
    const done = run;
    // The fix, applied to the same workload on the real kubelet: no restart in the window.
    await Promise.all(
      FIXED.map(async ({ name, windowMs, until: ok }) => {
        try {
          const r = done.results.get(name);
          if (r === undefined || r instanceof Error) throw r ?? new Error('no result');
          const d = r.live.pods[0]?.diagnoses.find((x) => x.container === 'app');
          const spec = done.specs.get(name);
          if (!d?.fix?.patch || !spec) throw new Error(`${name}: no fix to apply: ${JSON.stringify(d)}`);
          const verified = await verifyDiagnosis(setPodDefaults(r.pod), d);
          const manifest = incidentPod(namespace, NODE, `${name}-fixed`, [mergeContainer(spec, d.fix.patch)]);
          await clients.core.createNamespacedPod({ namespace, body: manifest as unknown as V1Pod });
          const started = Date.now();
          const seen = await until(
            `${name}-fixed: ${windowMs / 1000} s`,
            async () => {
              const p = plain<Pod>(await clients.core.readNamespacedPod({ name: `${name}-fixed`, namespace }));
              if (restarts(p) > 0) return p;
              return Date.now() - started >= windowMs && ok(p) ? p : undefined;
            },
            windowMs + 60_000,
            500,
          );
          fixed.set(name, { restarts: restarts(seen), verified });
        } catch (err) {
          fixed.set(name, err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
  }, 330_000);

  afterAll(async () => {
    closeServers();
    run?.close();
    await ns?.delete();
  }, 60_000);

  function diagnosis(name: string): { d: Diagnosis; offline: Diagnosis; code: number; text: string } {
    if (run === undefined) throw new Error('the incidents did not run');
    return appDiagnosis(run, name);
  }

  /** The container of an incident as the API server defaulted it (the budgets the numbers must match). */
  function defaulted(name: string): Container {
    return setPodDefaults(incidentPod('x', NODE, 'x', [run?.specs.get(name) as Container])).spec?.containers[0] as Container;
  }

  /** Offline from the same pod and events gives the same cause and numbers (the ages of events aside). */
  function sameOffline(d: Diagnosis, offline: Diagnosis): void {
    expect(offline.cause).toBe(d.cause);
    expect(offline.numbers).toEqual(d.numbers);
    expect(offline.fix).toEqual(d.fix);
  }

  it('slow start killed by liveness (no startup probe): the kill age within what the probes allow, a startupProbe of ≥ 60 s', () => {
    const { d, offline, code, text } = diagnosis('slow-start');
    expect(d.cause, text).toBe('slow-start-liveness');
    expect(code).toBe(1);
    const guard = startupGuard(defaulted('slow-start'));
    expect(d.numbers['budgetSeconds']).toBe(guard?.budgetSeconds);
    expect(d.numbers['kills']).toBeGreaterThanOrEqual(2);
    expect(d.numbers['killAgeSeconds']).toBeLessThanOrEqual((guard?.budgetSeconds ?? 0) + 2);
    expect(d.numbers['suggestedBudgetSeconds']).toBeGreaterThanOrEqual(60);
    expect(d.fix?.patch?.startupProbe).toMatchObject({ exec: { command: ['test', '-f', '/tmp/ok'] }, periodSeconds: 2, failureThreshold: 30 });
    sameOffline(d, offline);
  });

  it('startup probe too short: killed by the startup probe, failureThreshold raised to ≥ 60 s', () => {
    const { d, offline, text } = diagnosis('startup-short');
    expect(d.cause, text).toBe('startup-probe-too-short');
    expect(d.numbers['suggestedBudgetSeconds']).toBeGreaterThanOrEqual(60);
    expect(d.fix?.patch).toEqual({ name: 'app', startupProbe: { failureThreshold: 30 } });
    sameOffline(d, offline);
  });

  it('probe aimed at the wrong port: connection refused every time, names the declared containerPort', () => {
    const { d, offline, text } = diagnosis('wrong-port');
    expect(d.cause, text).toBe('probe-wrong-target');
    expect(d.summary).toContain(`port ${ports.wrong}`);
    expect(d.summary).toContain(`containerPort ${ports.declared} (http)`);
    expect(d.fix?.patch).toEqual({ name: 'app', livenessProbe: { httpGet: { port: ports.declared } } });
    sameOffline(d, offline);
  });

  it('probe aimed at the wrong path: 404 from the first probe, every failure a 404, the path named', () => {
    const { d, offline, text } = diagnosis('wrong-path');
    expect(d.cause, text).toBe('probe-wrong-target');
    expect(d.summary).toContain('asks for /health and the app answers 404 every time');
    expect(d.numbers['notFound']).toBeGreaterThanOrEqual(2);
    expect(d.numbers['kills']).toBeGreaterThanOrEqual(1);
    expect(d.evidence.map((e) => e.text).join('\n')).toContain('HTTP probe failed with statuscode: 404');
    expect(d.fix?.text).toContain(`livenessProbe.httpGet.path`);
    sameOffline(d, offline);
  });

  it('liveness timeouts: context deadline exceeded from the first probe with timeoutSeconds 1, timeoutSeconds 5 suggested', () => {
    const { d, offline, text } = diagnosis('liveness-timeout');
    expect(d.cause, text).toBe('liveness-timeout');
    expect(d.numbers['timeoutSeconds']).toBe(1);
    expect(d.numbers['suggestedTimeoutSeconds']).toBe(5);
    expect(d.evidence.map((e) => e.text).join('\n')).toContain('context deadline exceeded');
    sameOffline(d, offline);
  });

  it('hang: passed its probe for ~12 s, then timed out until the kill', () => {
    const { d, offline, text } = diagnosis('hang');
    expect(d.cause, text).toBe('hang');
    expect(d.numbers['hangToKillSeconds']).toBe(failureWindow(defaulted('hang').livenessProbe ?? {}, 'timeout', false).latestSeconds);
    expect(d.numbers['killAgeSeconds']).toBeGreaterThanOrEqual(12);
    sameOffline(d, offline);
  });

  it('the app answered 500 after being healthy: the probe did its job', () => {
    const { d, offline, text } = diagnosis('unhealthy');
    expect(d.cause, text).toBe('liveness-unhealthy');
    expect(d.summary).toContain('answered 500');
    sameOffline(d, offline);
  });

  it('crash with a real exit code: not the probes, exit code 3 (its log lines: previous-logs.test.ts)', () => {
    const { d, offline, text } = diagnosis('crash');
    expect(d.cause, text).toBe('app-crash');
    expect(d.numbers['exitCode']).toBe(3);
    expect(d.summary).toContain('not the probes');
    expect(offline.cause).toBe('app-crash');
    expect(offline.numbers['exitCode']).toBe(3);
  });

  it('OOMKilled through a 32Mi memory limit: not the probes, a larger limit suggested', () => {
    const { d, offline, text } = diagnosis('oom');
    expect(d.cause, text).toBe('oom-killed');
    expect(d.numbers['memoryLimitBytes']).toBe(32 * 2 ** 20);
    expect(d.fix?.patch).toEqual({ name: 'app', resources: { limits: { memory: '64Mi' } } });
    sameOffline(d, offline);
  });

  it('readiness flapping: failures with passes between, no restart', () => {
    const { d, offline, text } = diagnosis('flapping');
    expect(d.cause, text).toBe('readiness-flapping');
    expect(d.numbers['failures']).toBeGreaterThanOrEqual(4);
    expect(d.numbers['maxNotReadyTimes']).toBeGreaterThanOrEqual(2);
    sameOffline(d, offline);
  });

  it('readiness failing: 503 on every probe, never Ready, not flapping; the count and span from the events', () => {
    const { d, offline, code, text } = diagnosis('readiness-failing');
    expect(d.cause, text).toBe('readiness-failing');
    expect(code).toBe(1);
    expect(d.numbers['failures']).toBeGreaterThanOrEqual(5);
    expect(d.numbers['probesInSpan']).toBeUndefined();
    expect(d.numbers['periodSeconds']).toBe(2);
    expect(d.summary).toContain('HTTP probe failed with statuscode: 503');
    sameOffline(d, offline);
  });

  it('image pull failure: a tag the registry does not have', () => {
    const { d, offline, text } = diagnosis('image-pull');
    expect(d.cause, text).toBe('image-pull-failure');
    expect(d.summary).toContain('no such image or tag');
    sameOffline(d, offline);
  });

  it('SIGTERM ignored: still running seconds after the deletion\'s SIGTERM, killed at the end of the 20 s grace', () => {
    const { d, offline, text } = diagnosis('sigterm');
    expect(d.cause, text).toBe('sigterm-ignored');
    expect(d.numbers['graceSeconds']).toBe(20);
    expect(d.numbers['runningAfterSigtermSeconds']).toBeGreaterThanOrEqual(3);
    sameOffline(d, offline);
  });

  it('events deleted (as --event-ttl would): not enough information, what restartCount and lastState say, each with how sure it is', () => {
    const { d, offline, code, text } = diagnosis('expired');
    expect(d.cause, text).toBe('not-enough-information');
    expect(code).toBe(1);
    expect(d.numbers['restarts']).toBe(1);
    const said = (pattern: RegExp) => d.evidence.find((e) => pattern.test(e.text));
    expect(said(/^restartCount 1$/)).toMatchObject({ confidence: 'certain', from: 'status' });
    // The liveness kill's SIGTERM, which the app's trap turned into exit 143: lastState keeps it.
    expect(said(/^the run before the current one ended with exit code 143/)).toMatchObject({ confidence: 'certain', from: 'status' });
    expect(said(/^exit code 143 is SIGTERM: a kill from outside the app — a liveness probe kill/)).toMatchObject({ confidence: 'possible', from: 'rule' });
    expect(said(/no Started event is left: events expire after 1h0m0s/)).toMatchObject({ confidence: 'certain', from: 'events' });
    sameOffline(d, offline);
  });

  it('check --cluster -o sarif: the live diagnoses of the restarted pods are results with their cause id as ruleId, in valid SARIF', async () => {
    let out = '';
    let err = '';
    const code = await runCheck([], { output: 'sarif', failOn: 'never', startupTime: [], disable: [], cluster: true, namespace, kubeconfig }, { stdout: (s) => void (out += s), stderr: (s) => void (err += s) });
    expect(code, err).toBe(0);
    const log = JSON.parse(out) as SarifLog;
    expectValidSarif(log);
    const live = new Map((log.runs[0]?.results ?? []).filter((r) => r.properties?.['live'] === true).map((r) => [r.properties?.['pod'], r]));
    const expected: Record<string, string> = { 'slow-start': 'slow-start-liveness', 'startup-short': 'startup-probe-too-short', 'wrong-port': 'probe-wrong-target', 'wrong-path': 'probe-wrong-target', 'liveness-timeout': 'liveness-timeout', hang: 'hang', unhealthy: 'liveness-unhealthy' };
    for (const [pod, cause] of Object.entries(expected)) {
      const r = live.get(pod);
      expect(r?.ruleId, `${pod}: ${JSON.stringify(r)}`).toBe(cause);
      expect(r?.locations[0]?.physicalLocation.artifactLocation.uri).toBe(`${namespace}/pods/${pod}`);
    }
    // Not the probes' doing (a crash, an OOM kill, events gone): no live result.
    for (const pod of ['crash', 'oom', 'expired']) expect(live.has(pod), pod).toBe(false);
  });

  it.each(['slow-start', 'startup-short', 'wrong-port', 'liveness-timeout'])('%s: the fix applied to the same pod on the real kubelet gives no restart in the window; --verify agreed beforehand', (name) => {
    const f = fixed.get(name);
    if (f === undefined) throw new Error(`${name}: not run`);
    if (f instanceof Error) throw f;
    expect(f.restarts).toBe(0);
    if (name === 'wrong-port') expect(f.verified).toContain('nothing to simulate');
    else {
      if (typeof f.verified === 'string') throw new Error(f.verified);
      expect(f.verified.agrees, JSON.stringify(f.verified)).toBe(true);
    }
  });
});
