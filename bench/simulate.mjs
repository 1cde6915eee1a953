#!/usr/bin/env node
/**
 * `npm run bench -- --scenario simulate`: the cost of `probelet simulate` (the real kubelet on
 * the FakeClock). Two scenarios: the demo pod (3 containers, probes every 1–3 s, crash-looping
 * as the demo does) for 24 h of virtual time, and 1,000 copies of it for 1 h; each printed
 * with the probes simulated, beside a baseline measured now — the same FakeClock firing one
 * bare timer per probe, in one thread — as a ratio. Goals (issue #9): < 3 s and < 30 s of
 * wall time on 2 cores. 1,000 pods run on 10 simulated nodes (110 pods a node, the kubelet's
 * maxPods), on worker threads as `probelet simulate` runs them; the same again in one
 * thread (`threads: 1`, no goal) shows what the threads add.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';

const dist = (/** @type {string} */ p) => new URL(`../dist/${p}`, import.meta.url).href;
const { loadManifests } = await import(dist('api/documents.js'));
const { podsOf } = await import(dist('api/manifest.js'));
const { admitForSimulation } = await import(dist('simulate/pods.js'));
const { simulate } = await import(dist('simulate/simulation.js'));
const { parseScript } = await import(dist('simulate/script.js'));
const { FakeClock } = await import(dist('util/clock.js'));
const { simulationPlan } = await import(dist('simulate/nodes.js'));

const here = (/** @type {string} */ p) => fileURLToPath(new URL(p, import.meta.url));

/** The demo pod's behaviours, from examples/simulate/demo-behaviour.yaml. */
function demoBehaviours() {
  const doc = /** @type {Record<string, string | Record<string, string>>} */ (yaml.load(readFileSync(here('../examples/simulate/demo-behaviour.yaml'), 'utf8')));
  const out = new Map();
  for (const [name, value] of Object.entries(doc)) {
    if (typeof value === 'string') out.set(name, { script: parseScript(value), probes: {} });
    else out.set(name, { probes: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, parseScript(v)])) });
  }
  return out;
}

/** @param {number} copies */
async function demoPods(copies) {
  const load = await loadManifests([here('../examples/demo/pod.yaml')]);
  const [pod] = podsOf(load.objects).pods.map((/** @type {{ pod: object }} */ p) => p.pod);
  const many = Array.from({ length: copies }, (_, i) => ({ ...pod, metadata: { ...pod.metadata, name: `demo-${i}` } }));
  return admitForSimulation(many).pods;
}

/** The floor: the same FakeClock firing `timers` bare timers, `perInstant` at a time. */
async function baseline(/** @type {number} */ timers, /** @type {number} */ perInstant) {
  const clock = new FakeClock(0, { settle: 'microtasks' });
  const started = performance.now();
  let fired = 0;
  const instants = Math.ceil(timers / perInstant);
  for (let i = 0; i < perInstant; i++) {
    const tick = () => {
      fired++;
      if (fired < timers) clock.setTimeout(tick, 1000);
    };
    clock.setTimeout(tick, 1000);
  }
  await clock.advance(instants * 1000);
  return (performance.now() - started) / 1000;
}

/**
 * @param {string} name @param {number} copies @param {number} hours @param {number | null} goalS (null: a figure for comparison, no goal)
 * @param {number} [threads] worker threads at most (default: as `probelet simulate` plans them)
 */
async function scenario(name, copies, hours, goalS, threads) {
  const options = { pods: await demoPods(copies), behaviours: demoBehaviours(), forMs: hours * 3_600_000, seed: 1, ...(threads ? { threads } : {}) };
  // How simulate() will run it: the same plan it makes.
  const plan = simulationPlan(options);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await simulate(options);
  const wallS = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const baseS = await baseline(result.probes, copies * 5);
  const line = {
    scenario: name,
    pods: copies,
    nodes: plan.nodes.length,
    threads: plan.threads,
    virtualH: hours,
    probes: result.probes,
    wallS: Number(wallS.toFixed(2)),
    cpuS: Number(((used.user + used.system) / 1e6).toFixed(2)),
    usPerProbe: Number(((wallS * 1e6) / result.probes).toFixed(1)),
    goalS,
    withinGoal: goalS === null ? null : wallS < goalS,
    baselineS: Number(baseS.toFixed(2)),
    ratio: Number((wallS / baseS).toFixed(1)),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  return line;
}

// Piped into `head`: stop quietly.
process.stdout.on('error', () => process.exit(0));

const lines = [await scenario('demo pod, 24 h', 1, 24, 3)];
if (!process.argv.includes('--quick')) {
  lines.push(await scenario('1,000 demo pods, 1 h', 1000, 1, 30));
  lines.push(await scenario('  the same, one thread', 1000, 1, null, 1));
}
process.stdout.write('\nscenario                 nodes threads    probes      wall      goal   baseline (bare timers)   ratio\n');
for (const l of lines) {
  process.stdout.write(
    `${l.scenario.padEnd(24)} ${String(l.nodes).padStart(5)} ${String(l.threads).padStart(7)} ${String(l.probes).padStart(9)} ${`${l.wallS}s`.padStart(8)} ${(l.goalS === null ? '—' : `<${l.goalS}s`).padStart(8)}${l.withinGoal === null ? '    ' : l.withinGoal ? ' ok ' : ' MISS'} ${`${l.baselineS}s`.padStart(12)}             ${`${l.ratio}×`.padStart(6)}\n`,
  );
}
process.stdout.write('(measured on this machine now; compare runs from one invocation only)\n');
