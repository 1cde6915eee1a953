/**
 * `npm run oracle [-- --record] [--fast] [--only a,b] [--list] [--load N] [--help]`: runs the oracle's scenarios on
 * the local cluster's real kubelet (`npm run cluster:up` first) and on probelet, on a containerd
 * instance of probelet's own (`cri-up --name oracle`, torn down at the end), and prints, per
 * scenario, `scenario <name>: same | differs (<what>)` and the side-by-side table. Exit 1 when a
 * difference is not listed in known-differences.ts. `--record` rewrites the golden files.
 *
 * Each run prints the load average through it and the kubelet's own lateness (its metrics).
 * A scenario that differs in a way not listed is run again once, alone with the others that
 * did (not beside all of them), and its second outcome counts; the summary says how many.
 * `--load N` loads the machine on purpose through the first run: N CPU spinners and a writer,
 * ending at the run's end at the latest. The run holds the cluster state dir's lock.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { takeClusterLock } from '../../cluster/lock.mjs';
import { startLoad } from './load.js';
import { clusterKubeconfig, formatOutcome, type MeasuredRun, ROOT, runOracleMeasured } from './oracle.js';
import { registryUnavailable } from './registry.js';
import { SCENARIOS } from './scenarios.js';

/** probelet's containerd instance; `PROBELET_ORACLE_INSTANCE` for a second run beside this one. */
const CRI_INSTANCE = process.env.PROBELET_ORACLE_INSTANCE ?? 'oracle';

const USAGE = 'usage: npm run oracle [-- --record] [--fast] [--only a,b] [--list] [--load N] [--help]';

/** The flags, read strictly: an unknown one (`--help` was once taken for a full run) is an error, not ignored. */
function readFlags(argv: string[]): { values: { record?: boolean; fast?: boolean; only?: string; list?: boolean; load?: string; help?: boolean } } | { error: string } {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        record: { type: 'boolean' },
        fast: { type: 'boolean' },
        only: { type: 'string' },
        list: { type: 'boolean' },
        load: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    return { values };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

async function main(argv: string[]): Promise<number> {
  const flags = readFlags(argv);
  if ('error' in flags) {
    console.error(`oracle: ${flags.error}\n${USAGE}`);
    return 2;
  }
  if (flags.values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const record = flags.values.record === true;
  const fast = flags.values.fast === true;
  const only = flags.values.only?.split(',');
  if (flags.values.list === true) {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(30)} ${String(s.duration).padStart(4)} s  ${s.about}`);
    return 0;
  }
  let scenarios = SCENARIOS.filter((s) => (only === undefined || only.includes(s.name)) && (!fast || s.fast === true));
  if (scenarios.length === 0) {
    console.error(`oracle: no scenario matches; names: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const loadCpus = flags.values.load === undefined ? 0 : Number(flags.values.load);
  if (!Number.isInteger(loadCpus) || loadCpus < 0 || loadCpus > 16) {
    console.error('oracle: --load takes a number of CPU spinners, 0 to 16');
    return 2;
  }
  const cluster = clusterKubeconfig();
  if ('why' in cluster) {
    console.error(`oracle: ${cluster.why}`);
    return 1;
  }
  // The registry scenarios need both agents to pull from registry:up's registries.
  const pulling = scenarios.filter((s) => s.needsRegistry === true);
  const noRegistry = pulling.length > 0 ? registryUnavailable(kubeletCriDir(cluster.path)) : undefined;
  if (noRegistry !== undefined) {
    const names = pulling.map((s) => s.name).join(', ');
    if (only !== undefined) {
      console.error(`oracle: cannot run ${names}: ${noRegistry}`);
      return 1;
    }
    console.error(`oracle: leaving out ${names}: ${noRegistry}`);
    scenarios = scenarios.filter((s) => s.needsRegistry !== true);
  }
  await takeClusterLock('oracle', `${ROOT}cluster/lock.sh`);
  const started = Date.now();
  const endpoint = execFileSync('bash', [`${ROOT}scripts/cri-up.sh`, '--name', CRI_INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .trim()
    .split('\n')
    .at(-1);
  if (endpoint === undefined) throw new Error('cri-up printed no endpoint');
  const longest = Math.max(...scenarios.map((s) => s.duration));
  // Bounded by the longest scenario plus the time pods take to start: it ends by itself.
  const load = loadCpus > 0 ? startLoad({ seconds: longest + 120, cpus: loadCpus }) : undefined;
  try {
    console.error(`oracle: ${scenarios.length} scenarios at once, the longest ${longest} s${load ? `, the machine loaded by ${loadCpus} spinners and a writer` : ''}`);
    const first = await runOracleMeasured({ scenarios, criEndpoint: endpoint, kubeconfig: cluster.path, record });
    load?.stop();
    console.error(`oracle: first run: ${runFigures(first)}`);
    let outcomes = first.outcomes;
    const again = record ? [] : outcomes.filter((o) => o.unlisted.length > 0).map((o) => o.scenario);
    let rerun: MeasuredRun | undefined;
    if (again.length > 0) {
      console.error(`oracle: running again, without the others: ${again.map((s) => s.name).join(', ')}`);
      rerun = await runOracleMeasured({ scenarios: again, criEndpoint: endpoint, kubeconfig: cluster.path });
      console.error(`oracle: re-run: ${runFigures(rerun)}`);
      outcomes = outcomes.map((o) => rerun?.outcomes.find((r) => r.scenario.name === o.scenario.name) ?? o);
    }
    for (const o of outcomes) console.log(formatOutcome(o));
    const same = outcomes.filter((o) => o.comparison?.same === true).length;
    const unlisted = outcomes.filter((o) => o.unlisted.length > 0);
    const late = outcomes.filter((o) => (o.comparison?.notes ?? []).some((n) => n.includes(' late — '))).length;
    console.log(
      `oracle: ${outcomes.length} scenarios, ${same} same, ${outcomes.length - same - unlisted.length} with listed differences only, ${unlisted.length} with unlisted differences; ${late} with a side late; ${again.length} re-run alone; ${runFigures(first)}${rerun ? ` (re-run: ${runFigures(rerun)})` : ''}; ${Math.round((Date.now() - started) / 1000)} s${record ? '; golden files written' : ''}`,
    );
    return unlisted.length > 0 ? 1 : 0;
  } finally {
    load?.stop();
    execFileSync('bash', [`${ROOT}scripts/cri-down.sh`, '--name', CRI_INSTANCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
}

/** The directory of the containerd the cluster's kubelet runs on: beside its admin kubeconfig, its kubelet.yaml names the socket. */
function kubeletCriDir(kubeconfig: string): string {
  const config = readFileSync(join(dirname(kubeconfig), 'kubelet.yaml'), 'utf8');
  const socket = /^containerRuntimeEndpoint: unix:\/\/(\S+)$/m.exec(config)?.[1] ?? '';
  return dirname(socket);
}

/** `load 8.1 (max 12.3), kubelet late ≤ 0.4 s (relist p99 +0.2 s, sync p99 0.2 s)` */
function runFigures(run: MeasuredRun): string {
  const k = run.kubelet;
  const lateness = k === undefined ? 'kubelet lateness unknown (metrics not read)' : `kubelet late ≤ ${k.seconds} s (relist p99 +${k.relistLateP99} s, sync p99 ${k.syncP99} s)`;
  return `load ${run.load.mean} (max ${run.load.max}), ${lateness}`;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`oracle: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
