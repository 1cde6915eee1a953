/**
 * `npm run oracle [-- --record] [--fast] [--only a,b] [--list]`: runs the oracle's scenarios on
 * the local cluster's real kubelet (`npm run cluster:up` first) and on probelet, on a containerd
 * instance of probelet's own (`cri-up --name oracle`, torn down at the end), and prints, per
 * scenario, `scenario <name>: same | differs (<what>)` and the side-by-side table. Exit 1 when a
 * difference is not listed in known-differences.ts. `--record` rewrites the golden files.
 */
import { execFileSync } from 'node:child_process';
import { clusterKubeconfig, formatOutcome, ROOT, runOracle } from './oracle.js';
import { SCENARIOS } from './scenarios.js';

/** probelet's containerd instance; `PROBELET_ORACLE_INSTANCE` for a second run beside this one. */
const CRI_INSTANCE = process.env.PROBELET_ORACLE_INSTANCE ?? 'oracle';

async function main(argv: string[]): Promise<number> {
  const record = argv.includes('--record');
  const fast = argv.includes('--fast');
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? (argv[onlyAt + 1] ?? '').split(',') : undefined;
  if (argv.includes('--list')) {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(30)} ${String(s.duration).padStart(4)} s  ${s.about}`);
    return 0;
  }
  const scenarios = SCENARIOS.filter((s) => (only === undefined || only.includes(s.name)) && (!fast || s.fast === true));
  if (scenarios.length === 0) {
    console.error(`oracle: no scenario matches; names: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const cluster = clusterKubeconfig();
  if ('why' in cluster) {
    console.error(`oracle: ${cluster.why}`);
    return 1;
  }
  const started = Date.now();
  const endpoint = execFileSync('bash', [`${ROOT}scripts/cri-up.sh`, '--name', CRI_INSTANCE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .trim()
    .split('\n')
    .at(-1);
  if (endpoint === undefined) throw new Error('cri-up printed no endpoint');
  try {
    console.error(`oracle: ${scenarios.length} scenarios at once, the longest ${Math.max(...scenarios.map((s) => s.duration))} s`);
    const outcomes = await runOracle({ scenarios, criEndpoint: endpoint, kubeconfig: cluster.path, record });
    for (const o of outcomes) console.log(formatOutcome(o));
    const same = outcomes.filter((o) => o.comparison?.same === true).length;
    const unlisted = outcomes.filter((o) => o.unlisted.length > 0);
    console.log(
      `oracle: ${outcomes.length} scenarios, ${same} same, ${outcomes.length - same - unlisted.length} with listed differences only, ${unlisted.length} with unlisted differences; ${Math.round((Date.now() - started) / 1000)} s${record ? '; golden files written' : ''}`,
    );
    return unlisted.length > 0 ? 1 : 0;
  } finally {
    execFileSync('bash', [`${ROOT}scripts/cri-down.sh`, '--name', CRI_INSTANCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`oracle: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
