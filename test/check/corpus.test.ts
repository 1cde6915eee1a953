/**
 * The corpus (test/fixtures/corpus/): shapes of published manifests with every finding
 * pinned — rule, severity, container, line — so that a rule change that adds noise (a false
 * positive, the same fact twice) fails here, and the budgets `check` prints are the ones
 * `simulate` plays out on virtual time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseManifestDocuments } from '../../src/api/documents.js';
import { podsOf } from '../../src/api/manifest.js';
import { checkManifests, type CheckResult } from '../../src/check/run.js';
import { admitForSimulation } from '../../src/simulate/pods.js';
import { parseScript } from '../../src/simulate/script.js';
import { simulate } from '../../src/simulate/simulation.js';

const DIR = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));

function checkFile(name: string): CheckResult {
  return checkManifests(parseManifestDocuments(readFileSync(`${DIR}${name}`, 'utf8'), name), { startupTimes: new Map() });
}

/** `line severity rule container`, in the order the runner reports them. */
function pinned(result: CheckResult): string[] {
  return result.findings.map((f) => `${f.line} ${f.severity} ${f.rule} ${f.container ?? '-'}`);
}

const EXPECTED: Record<string, string[]> = {
  'istio-injected-deployment.yaml': [
    '46 info probe-port-undeclared istio-proxy',
    '33 info liveness-probe-missing istio-proxy',
    // Istio's own default (timeout 3 > period 1): true, and the numbers are simulate's.
    '56 warning probe-timeout-not-below-period istio-proxy',
    '71 info probe-port-undeclared reviews',
    '68 info startup-probe-missing reviews',
    // The sidecar's 600 × 1 s, which the user did not write: info, and it stands for sidecar-startup-chain.
    '68 info startup-exceeds-progress-deadline reviews',
    // Classic injection: the proxy's 600 × 1 s is its own budget, 600 s, within the deadline.
    '104 warning probes-missing ratings',
    '120 info probe-port-undeclared istio-proxy',
    '108 info liveness-probe-missing istio-proxy',
    '129 warning probe-timeout-not-below-period istio-proxy',
    // The proxy's own 600 × 1 s startup probe plus the relist (docs/timing-model.md) is 600.9 s, past the
    // default deadline of 600 s: info, since the injector wrote it, not the user.
    '124 info startup-exceeds-progress-deadline istio-proxy',
  ],
  // hostNetwork: host 127.0.0.1 is needed there, and probe-host-set stays quiet.
  'hostnetwork-daemonset.yaml': ['36 info probe-port-undeclared cilium-agent'],
  'linkerd-proxy.yaml': [
    '41 info probe-port-numeric linkerd-proxy',
    '42 warning liveness-delay-as-startup linkerd-proxy',
    // T = P = 1: no probe-timeout-not-below-period; the same failure budget: info, not a warning.
    '38 info liveness-before-readiness linkerd-proxy',
    '60 info startup-probe-missing emoji-svc',
  ],
  // T = P = 10: no probe-timeout-not-below-period.
  'calico-node.yaml': ['38 warning liveness-delay-as-startup calico-node'],
  // TCP probes never fail on a hang: no liveness-before-readiness; identical probes once.
  'tcp-liveness-readiness.yaml': ['19 warning probes-identical goproxy', '22 warning liveness-delay-as-startup goproxy'],
  'mysql-statefulset.yaml': [
    '58 info exec-probe-load mysql',
    '46 warning liveness-delay-as-startup mysql',
    '59 warning exec-probe-default-timeout mysql',
    '60 warning probes-missing xtrabackup',
  ],
  'kubernetes-io-examples.yaml': [
    '10 warning readiness-probe-missing liveness',
    '22 info exec-probe-load liveness',
    '21 warning liveness-delay-as-startup liveness',
    '16 warning exec-probe-default-timeout liveness',
    '39 info probe-port-undeclared liveness',
    '32 warning readiness-probe-missing liveness',
    '43 warning liveness-delay-as-startup liveness',
    '52 warning readiness-probe-missing etcd',
    '69 warning liveness-delay-as-startup etcd',
    '77 warning readiness-probe-missing app',
  ],
};

describe('the corpus of published manifest shapes', () => {
  it('has a pin for every file', () => {
    expect(readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file}: exactly the pinned findings, each fact once per container`, () => {
      const result = checkFile(file);
      expect(result.problems).toEqual([]);
      expect(pinned(result)).toEqual(expected);
      const keys = result.findings.map((f) => `${f.object.name}/${f.container ?? ''}/${f.rule}`);
      expect(new Set(keys).size).toBe(keys.length);
    });
  }
});

/** Plays `file` (or YAML text) on virtual time with `scripts` (CONTAINER → SCRIPT) and returns the outcome of the first container named. */
async function play(
  file: string,
  scripts: Record<string, string>,
  forMs: number,
  text?: string,
  seed = 1,
): Promise<{ readyAtMs: number | null; kills: number[]; starts: number[]; podReady: number | null }[]> {
  const load = parseManifestDocuments(text ?? readFileSync(`${DIR}${file}`, 'utf8'), file);
  const { pods } = podsOf(load.objects);
  const admitted = admitForSimulation(pods.map((p) => p.pod)).pods;
  const behaviours = new Map(Object.entries(scripts).map(([name, script]) => [name, { script: parseScript(script), probes: {} }]));
  const result = await simulate({ pods: admitted, behaviours, forMs, seed, threads: 1 });
  const [container] = Object.keys(scripts);
  return result.pods.map((p) => {
    const c = p.containers.find((x) => x.name === container);
    return { readyAtMs: c?.readyAtMs ?? null, kills: c?.kills.map((k) => k.tMs) ?? [], starts: c?.starts ?? [], podReady: p.readyAtMs };
  });
}

/** Seeds (δ, the relist, the requeue jitter) and hang moments (the phase of the ticks) every hang window is played over. */
const SEEDS = [1, 2, 3];
const HANG_OFFSETS_MS = [0, 1_250, 2_500, 3_750, 5_000, 6_250, 7_500, 8_750];

/**
 * How long after the hang the first liveness kill comes, for a hang `hangAfterS` seconds after
 * the container's start (scripts run from the container's start, which init containers delay:
 * measuring from the pod's start would add their time), over `SEEDS` and `HANG_OFFSETS_MS`.
 */
async function hangToKill(file: string, container: string, hangAfterS: number, text?: string): Promise<number[]> {
  const detected: number[] = [];
  for (const seed of SEEDS) {
    for (const offset of HANG_OFFSETS_MS) {
      const hangMs = hangAfterS * 1000 + offset;
      const [pod] = await play(file, { [container]: `up:${hangMs}ms,hang` }, hangMs + 5 * 60_000, text, seed);
      const hangAt = (pod?.starts[0] ?? Number.NaN) + hangMs;
      detected.push(((pod?.kills.find((k) => k > hangAt) ?? Number.NaN) - hangAt) / 1000);
    }
  }
  return detected;
}

describe('the corpus on virtual time: what check says, simulate plays', () => {
  it('a hung goproxy (TCP probes) is never killed nor taken out of service, as its budgets say (never)', async () => {
    const budget = checkFile('tcp-liveness-readiness.yaml').containers[0];
    expect([budget?.hangToKillSeconds, budget?.hangToNotReadySeconds]).toEqual([null, null]);
    const [pod] = await play('tcp-liveness-readiness.yaml', { goproxy: 'up:1m,hang' }, 10 * 60_000);
    expect(pod?.kills).toEqual([]);
    expect(pod?.readyAtMs).not.toBeNull();
  });

  it('a hung calico-node is killed within its hang budget (exec probes, T = P = 10), whatever the seed and the phase', async () => {
    const budget = checkFile('calico-node.yaml').containers[0];
    // Its plain init containers complete by default, so the app container runs.
    const [pod] = await play('calico-node.yaml', { 'calico-node': 'up:2m,hang' }, 10 * 60_000);
    expect(pod?.podReady).not.toBeNull();
    const grace = 30; // the pod's default terminationGracePeriodSeconds, part of the budget
    expect(budget?.hangToKillSeconds).toBe(70 + grace);
    // Between the earliest (6 − 1) × max(P, T) + T = 60 s and the worst case the budget states,
    // 70 s (P + (F − 1) × max(P, T) + T), counted from the hang (the container's start + 2 m).
    const detected = await hangToKill('calico-node.yaml', 'calico-node', 120);
    expect(Math.min(...detected)).toBeGreaterThanOrEqual(60);
    expect(Math.max(...detected)).toBeLessThanOrEqual(70);
    // Both ends are approached: the window is no wider than what the phases play out.
    expect(Math.min(...detected)).toBeLessThan(61);
    expect(Math.max(...detected)).toBeGreaterThan(69);
  });

  it("liveness-before-readiness's 'after 21s to 31s' (the default probe: 2 × 10s + timeout 1s, a period later at worst) is what a hang plays out", async () => {
    const text = 'apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers:\n    - name: app\n      image: a:1\n      livenessProbe: { httpGet: { path: /healthz, port: 8080 } }\n';
    const detected = await hangToKill('p.yaml', 'app', 60, text);
    expect(Math.min(...detected)).toBeGreaterThanOrEqual(21);
    expect(Math.max(...detected)).toBeLessThanOrEqual(31);
    expect(Math.min(...detected)).toBeLessThan(22);
    expect(Math.max(...detected)).toBeGreaterThan(30);
  });

  it("probe-timeout-not-below-period's numbers are the ones a hang plays out: T > P against the same probe at T = P", async () => {
    const pod = (timeout: number): string =>
      `apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  containers:\n    - name: app\n      image: a:1\n      livenessProbe: { httpGet: { path: /healthz, port: 8080 }, periodSeconds: 5, timeoutSeconds: ${timeout}, failureThreshold: 3 }\n`;
    const [finding] = checkManifests(parseManifestDocuments(pod(10), 'p.yaml'), { startupTimes: new Map() }).findings.filter((f) => f.rule === 'probe-timeout-not-below-period');
    expect(finding?.message).toContain('3 failures take up to 35s to count (liveness period 5s + 3 × timeout 10s), against up to 20s with timeoutSeconds 5');
    for (const [timeout, earliest, latest] of [
      [10, 30, 35],
      [5, 15, 20],
    ] as const) {
      const detected = await hangToKill('p.yaml', 'app', 60, pod(timeout));
      expect(Math.min(...detected), `timeoutSeconds ${timeout}`).toBeGreaterThanOrEqual(earliest);
      expect(Math.max(...detected), `timeoutSeconds ${timeout}`).toBeLessThanOrEqual(latest);
      expect(Math.max(...detected) - Math.min(...detected), `timeoutSeconds ${timeout}: the phases span the window`).toBeGreaterThan(latest - earliest - 1);
    }
  });

  it('mysql with its plain init containers reaches its app containers by default', async () => {
    const pods = await play('mysql-statefulset.yaml', { mysql: 'up' }, 2 * 60_000);
    expect(pods[0]?.readyAtMs).not.toBeNull();
  });
});
