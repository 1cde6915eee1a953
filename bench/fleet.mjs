#!/usr/bin/env node
/**
 * `npm run bench -- --scenario fleet [--vs kwok] [--nodes N] [--pods M | --pods-per-node K] [--limit S] [--hold S]`
 * or `--scale M1,M2,… [--pods-per-node K]`
 * (default 50 × 100 = 5,000 pods, limit 600 s): `probelet node --runtime simulated --nodes N`
 * under the real API server of KUBECONFIG (`eval "$(npm run -s cluster:env)"`, an admin
 * identity: a fleet writes every one of its nodes). One Deployment per node, pinned to it, each
 * pod with an HTTP readiness and liveness probe (period 10 s) on the simulated handlers: see
 * lib/fleet-window.mjs for what is measured, lib/fleet-agents.mjs for how the agents run.
 *
 * Alone it prints one JSON line: the window's figures, the fleet's own count of its writes
 * (those of its stop included: each pod's final status) beside what a kubelet would make for the
 * same pods, and the goals of docs/node.md. With `--vs kwok` the same Deployments go first on N
 * nodes of kwok, then on probelet's (the kubelet's writes), then on probelet --lean-writes', one
 * after the other: one JSON line per agent, then the three side by side with the ratios and the
 * goals of issue 31 (docs/node.md, "kwok beside probelet"). With `--scale` a fresh probelet fleet
 * for each step (Mi pods on Mi ÷ K nodes): one JSON line a step, then memory per pod and per
 * node and CPU per probe across the steps, and whether they stay flat (docs/node.md).
 * Removes what it created.
 */
import { cpus, totalmem } from 'node:os';
import { startKwok, startProbelet } from './lib/fleet-agents.mjs';
import { kubeconfigPath } from './lib/fleet-cluster.mjs';
import { FLEET_USAGE, agentSummary, fleetReport, parseFleetOptions, round, scaleReport, scaleStep } from './lib/fleet-report.mjs';
import { measureWindow, removeWindow } from './lib/fleet-window.mjs';

const log = (/** @type {string} */ line) => process.stderr.write(`bench fleet: ${line}\n`);

/** @type {import('./lib/fleet-report.mjs').FleetOptions} */
let o;
try {
  o = parseFleetOptions(process.argv.slice(2), process.pid);
} catch (err) {
  process.stderr.write(`bench fleet: ${err instanceof Error ? err.message : String(err)}\n${FLEET_USAGE}\n`);
  process.exit(2);
}
try {
  kubeconfigPath();
} catch (err) {
  log(err instanceof Error ? err.message : String(err));
  process.exit(2);
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`;

/** What an INT or TERM must undo: the running agent and its window's namespace. */
/** @type {(() => Promise<void>) | undefined} */
let undo;
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.once(signal, () => {
    log(`${signal}: stopping the agent and removing what this run made`);
    void (undo?.() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

/**
 * Starts one agent, measures its window, stops it and removes what the window made.
 * @param {'kwok' | 'probelet' | 'lean'} kind  lean: probelet --lean-writes
 * @param {string} name  its nodes' prefix
 * @param {string} namespace
 * @param {number} [nodes]
 * @param {(window: import('./lib/fleet-report.mjs').AgentWindow) => void} [measured]  told the window before the clean-up (which can take minutes)
 */
async function run(kind, name, namespace, nodes = o.nodes, measured = undefined) {
  const startedAt = Date.now();
  const agent = kind === 'kwok' ? await startKwok(name, nodes, o.limitS * 1000) : await startProbelet(name, nodes, o.limitS * 1000, { leanWrites: kind === 'lean' });
  log(`${kind}: ${nodes} nodes Ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  const cleanup = async () => {
    undo = undefined;
    await agent.stop();
    await removeWindow(namespace, agent.nodes, 120, log);
  };
  undo = cleanup;
  try {
    const window = await measureWindow(agent, o, namespace, log);
    measured?.(window);
    return { agent, window, elapsedS: (Date.now() - startedAt) / 1000 };
  } finally {
    await cleanup();
  }
}

try {
  await main();
} catch (err) {
  log(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}

async function main() {
  if (o.scale) {
    /** @type {import('./lib/fleet-report.mjs').ScaleStep[]} */
    const steps = [];
    for (const pods of o.scale) {
      await run(o.lean ? 'lean' : 'probelet', `${o.prefix}-${pods}`, `probelet-${o.prefix}-${pods}`, pods / o.perNode, (window) => {
        const step = scaleStep(window);
        process.stdout.write(`${JSON.stringify(step)}\n`);
        steps.push(step);
      });
    }
    const { text, flat, ratios } = scaleReport(steps);
    process.stdout.write(`${JSON.stringify({ scenario: 'fleet-scale', flat, ratios })}\n\n${new Date().toISOString()}, ${machine}\n${text}\n`);
  } else if (o.vs === 'kwok') {
    const kwok = agentSummary((await run('kwok', `${o.prefix}-kwok`, `probelet-${o.prefix}-kwok`)).window);
    process.stdout.write(`${JSON.stringify(kwok)}\n`);
    const probelet = agentSummary((await run('probelet', `${o.prefix}-probelet`, `probelet-${o.prefix}-probelet`)).window);
    process.stdout.write(`${JSON.stringify(probelet)}\n`);
    const lean = agentSummary((await run('lean', `${o.prefix}-lean`, `probelet-${o.prefix}-lean`)).window);
    process.stdout.write(`${JSON.stringify(lean)}\n`);
    process.stdout.write(`\n${new Date().toISOString()}, ${machine}\n${fleetReport(kwok, probelet, lean)}\n`);
  } else {
    const { agent, window, elapsedS } = await run(o.lean ? 'lean' : 'probelet', o.prefix, `probelet-${o.prefix}`, o.nodes, (w) => process.stdout.write(`${JSON.stringify({ measured: scaleStep(w) })}\n`));
    const summary = agentSummary(window);
    const pods = window.pods;
    // A kubelet for the same pods (upstream rules): status patches Pending(ContainerCreating) →
    // Running not Ready → Ready = 3 per pod; events Pulled, Created, Started = 3 per pod; a Lease
    // renewal per node every 10 s; a node status write every 5 min (or on change).
    const kubelet = { statusWrites: 3 * pods, eventWrites: 3 * pods, leaseRenewals: Math.floor(elapsedS / 10) * o.nodes, nodeStatusWrites: Math.floor(elapsedS / 300) * o.nodes };
    const maxBoundToReadyS = window.boundToReadyMs.reduce((a, b) => Math.max(a, b), 0) / 1000;
    const out = {
      date: new Date().toISOString(),
      machine,
      ...summary,
      maxBoundToReadyS: round(maxBoundToReadyS, 1),
      elapsedS: round(elapsedS, 1),
      // Its final writes at the stop (every pod's last status, Killing events) are included.
      probelet: 'writes' in agent && typeof agent.writes === 'function' ? agent.writes() : undefined,
      kubeletWouldMake: kubelet,
      // Memory per pod and CPU per probe as a --scale step reports them (scaleReport compares such lines).
      scale: scaleStep(window),
      goals: { allReadyWithin2MinOfScheduling: maxBoundToReadyS <= 120 && window.ready === pods, rssUnder500MB: window.agentPeakRssMB <= 500, noMissedLeaseRenewal: window.maxLeaseGapS <= 15 },
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  }
}
