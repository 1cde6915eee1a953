/**
 * The differential oracle, as a function the CLI (`npm run oracle`) and the tests share:
 * starts each scenario's probed servers, runs the scenarios on the real kubelet and on
 * probelet at the same time, compares, and (with `record`) writes the kubelet's side as the
 * golden files `npm test` holds probelet to without a cluster.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packageVersion } from '../../src/cli/version.js';
import { runOnKubelet, runOnNode, runOnProbelet, type Prepared } from './agents.js';
import { compareRecords, type Comparison } from './compare.js';
import { kubeApi } from './kube-api.js';
import { type KubeletLateness, type LoadSample, sampleLoad, watchKubeletLateness } from './load.js';
import { startProbeServer } from './probe-server.js';
import { maskNamespace, type OracleRecord } from './record.js';
import { RUNTIME, type Scenario } from './scenarios.js';
import { EVENT_ALIASES, knownDifference } from './known-differences.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));
export const KUBELET_NODE = process.env.PROBELET_CLUSTER_NODE ?? 'probelet-kubelet';

/** How late each agent's syncs ran during the run (seconds), measured: extra slack for the rule. */
export interface Lateness {
  kubeletSeconds?: number;
  probeletSeconds?: number;
}

export interface ScenarioOutcome {
  scenario: Scenario;
  kubelet: OracleRecord | Error;
  probelet: OracleRecord | Error;
  comparison?: Comparison;
  /** Differences not listed in known-differences.ts. */
  unlisted: string[];
}

/** KUBECONFIG of the local cluster (cluster/env.sh), or why there is none. */
export function clusterKubeconfig(): { path: string } | { why: string } {
  try {
    const env = execFileSync('bash', [`${ROOT}cluster/env.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const m = /^export KUBECONFIG=(.*)$/m.exec(env);
    if (m?.[1] === undefined) return { why: 'cluster/env.sh printed no KUBECONFIG' };
    return { path: m[1] };
  } catch {
    return { why: 'no cluster (run `npm run cluster:up` as root)' };
  }
}

export function goldenPath(name: string): string {
  return `${GOLDEN_DIR}${name}.json`;
}

export function readGolden(name: string): OracleRecord | undefined {
  const path = goldenPath(name);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as OracleRecord) : undefined;
}

async function prepare(scenarios: Scenario[]): Promise<Prepared[]> {
  return Promise.all(
    scenarios.map(async (scenario) => ({
      scenario,
      server: scenario.server === undefined ? undefined : await startProbeServer(scenario.server.kind, scenario.server.respond),
    })),
  );
}

/**
 * Runs `scenarios` on both agents. `kubeconfig` undefined: the kubelet's side comes from the
 * golden files (no cluster needed, only containerd for probelet).
 */
export async function runOracle(options: { scenarios: Scenario[]; criEndpoint: string; kubeconfig?: string; record?: boolean }): Promise<ScenarioOutcome[]> {
  return (await runOracleMeasured(options)).outcomes;
}

/** One oracle run with the machine's load and the kubelet's own lateness beside it. */
export interface MeasuredRun {
  outcomes: ScenarioOutcome[];
  load: LoadSample;
  /** Undefined without a cluster, or when the kubelet's metrics could not be read. */
  kubelet?: KubeletLateness;
}

/**
 * {@link runOracle}, measuring the load average through the run and the real kubelet's
 * lateness (its metrics), which widens the slack the rule gives both sides (they run on the
 * same machine at once, so the kubelet's lateness stands for probelet's too).
 */
export async function runOracleMeasured(options: { scenarios: Scenario[]; criEndpoint: string; kubeconfig?: string; record?: boolean }): Promise<MeasuredRun> {
  const forKubelet = options.kubeconfig === undefined ? [] : await prepare(options.scenarios);
  const forProbelet = await prepare(options.scenarios);
  const load = sampleLoad();
  const api = options.kubeconfig === undefined ? undefined : kubeApi(options.kubeconfig);
  const metrics = api === undefined ? undefined : await watchKubeletLateness(api, KUBELET_NODE);
  try {
    const kubeletSide = api === undefined ? undefined : runOnKubelet(api, KUBELET_NODE, forKubelet);
    const probeletSide = runOnProbelet(options.criEndpoint, `probelet ${packageVersion()}`, forProbelet);
    const [kubelet, probelet] = await Promise.all([kubeletSide, probeletSide]);
    const kubeletLateness = await metrics?.finish();
    const lateness: Lateness = kubeletLateness === undefined ? {} : { kubeletSeconds: kubeletLateness.seconds, probeletSeconds: kubeletLateness.seconds };
    const outcomes = options.scenarios.map((scenario) => {
      const k: OracleRecord | Error =
        kubelet?.records.get(scenario.name) ?? readGolden(scenario.name) ?? new Error(`no golden file ${goldenPath(scenario.name)}`);
      const p = probelet.get(scenario.name) ?? new Error('no record');
      if (options.record === true && !(k instanceof Error) && kubelet !== undefined) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(goldenPath(scenario.name), `${JSON.stringify(k, null, 1)}\n`);
      }
      return outcome(scenario, k, p, { lateness });
    });
    return { outcomes, load: load.stop(), ...(kubeletLateness === undefined ? {} : { kubelet: kubeletLateness }) };
  } finally {
    load.stop();
    await Promise.all([...forKubelet, ...forProbelet].map((p) => p.server?.close()));
  }
}

/**
 * One scenario's comparison and the differences known-differences.ts does not list.
 * `conditions`: compare the pod conditions too (both records through the API).
 */
function outcome(scenario: Scenario, k: OracleRecord | Error, p: OracleRecord | Error, options: { conditions?: boolean; lateness?: Lateness } = {}): ScenarioOutcome {
  if (k instanceof Error || p instanceof Error) {
    const why = [k, p].filter((x): x is Error => x instanceof Error).map((e) => e.message);
    return { scenario, kubelet: k, probelet: p, unlisted: why };
  }
  // Each side judged by the rule on its own times, with the runtime's latency under the full
  // oracle's load and the lateness measured on the agent (its syncs' latency) as slack.
  const slack = (agentSeconds: number | undefined): number => RUNTIME + Math.ceil(agentSeconds ?? 0);
  const rules = {
    pod: scenario.pod(0),
    slackSeconds: { kubelet: slack(options.lateness?.kubeletSeconds), probelet: slack(options.lateness?.probeletSeconds) },
    failsFromStart: scenario.failsLater !== true,
  };
  // The measured lateness widens the times' tolerance too: "late" is measured, not guessed.
  const tolerance = scenario.tolerance + Math.ceil(options.lateness?.kubeletSeconds ?? 0);
  const lateness = options.lateness === undefined ? undefined : { kubelet: Math.ceil(options.lateness.kubeletSeconds ?? 0), probelet: Math.ceil(options.lateness.probeletSeconds ?? 0) };
  const comparison = compareRecords(k, p, tolerance, EVENT_ALIASES, { ...(options.conditions === undefined ? {} : { conditions: options.conditions }), rules, ...(lateness === undefined ? {} : { lateness }) });
  const unlisted = comparison.differences.filter((d) => knownDifference(scenario.name, d) === undefined);
  return { scenario, kubelet: k, probelet: p, comparison, unlisted };
}

/**
 * The scenarios side by side through the API for both agents: each pod created at once on the
 * real kubelet's node (in `namespaces.kubelet`) and on a `probelet node` (`probeletNode`, in
 * `namespaces.probelet`), both watched and recorded as runOnKubelet records the kubelet's,
 * then compared, pod conditions included.
 */
export async function runSideBySide(options: { scenarios: Scenario[]; kubeconfig: string; probeletNode: string; namespaces: { kubelet: string; probelet: string } }): Promise<ScenarioOutcome[]> {
  const forKubelet = await prepare(options.scenarios);
  const forProbelet = await prepare(options.scenarios);
  try {
    const api = kubeApi(options.kubeconfig);
    const [kubelet, probelet] = await Promise.all([
      runOnNode(api, { agent: 'kubelet', nodeName: KUBELET_NODE, namespace: options.namespaces.kubelet }, forKubelet),
      runOnNode(api, { agent: 'probelet', nodeName: options.probeletNode, namespace: options.namespaces.probelet }, forProbelet),
    ]);
    const side = (records: Map<string, OracleRecord | Error>, name: string, namespace: string): OracleRecord | Error => {
      const r = records.get(name) ?? new Error('no record');
      return r instanceof Error ? r : maskNamespace(r, namespace);
    };
    return options.scenarios.map((scenario) =>
      outcome(scenario, side(kubelet.records, scenario.name, options.namespaces.kubelet), side(probelet.records, scenario.name, options.namespaces.probelet), { conditions: true }),
    );
  } finally {
    await Promise.all([...forKubelet, ...forProbelet].map((p) => p.server?.close()));
  }
}

/** `scenario <name>: same | differs (<what>)`, then its side-by-side table. */
export function formatOutcome(o: ScenarioOutcome): string {
  const c = o.comparison;
  if (c === undefined) return `scenario ${o.scenario.name}: differs (${o.unlisted.join('; ')})\n`;
  const head = c.same ? 'same' : `differs (${c.differences.join('; ')})`;
  const listed = c.differences.length - o.unlisted.length;
  const note = listed > 0 ? `  [${listed} listed in docs/differences.md]` : '';
  const notes = c.notes.map((n) => `  rule: ${n}\n`).join('');
  return `scenario ${o.scenario.name}: ${head}${note}\n  ${o.scenario.about}; tolerance ${o.scenario.tolerance} s\n${notes}${c.table}\n`;
}
