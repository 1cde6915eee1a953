/**
 * `probelet simulate FILE…`: what the kubelet will do with these pods when their containers
 * behave as described, played out by the real kubelet on virtual time (see simulate/).
 * Prints what `probelet run` would have printed, each line stamped with virtual time, then
 * a summary per container with the reasons for every kill in numbers; `--sweep` repeats the
 * simulation over the length of a container's first phase and finds where it breaks.
 */
import { stat } from 'node:fs/promises';
import { Command, Option } from 'commander';
import type { Pod } from '../../api/types.js';
import { formatProblem, loadManifests, skippedNote } from '../../api/documents.js';
import { podsOf, withoutRefusedWorkloads } from '../../api/manifest.js';
import { containerScript, isPlainInit, type ContainerBehaviour } from '../../simulate/behaviour.js';
import { explainKill, explainNeverReady, podStamp, stamp } from '../../simulate/explain.js';
import { MAX_PODS_PER_NODE, simulationWork } from '../../simulate/nodes.js';
import { admitForSimulation } from '../../simulate/pods.js';
import { formatScript } from '../../simulate/script.js';
import { SIMULATION_ORIGIN_MS, simulate, type PodOutcome, type SimulationResult } from '../../simulate/simulation.js';
import { startServer, type RunningServer } from '../../server/server.js';
import { timelineView, type Timeline } from '../../server/timeline.js';
import { formatGoDuration } from '../../util/duration.js';
import { EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { addExamples, filenameOption, inputPaths, outputOption } from '../flags.js';
import { requireReadable } from '../inputs.js';
import { CliUsageError, processIO, type CliIO } from '../io.js';
import { createLiveView, type OutputFormat } from '../view/live-view.js';
import { createRunJsonView } from '../run/json-lines.js';
import { parseDuration, parseListen, type ListenAddress } from '../run/flags.js';
import { printRejected } from '../run/input.js';
import { parseSweep, readBehaviours, sweptBehaviours, type SweepPlan } from './input.js';
import { exitWhenOutputCloses, processSignals } from '../view/terminal.js';
import { formatTable } from '../view/view.js';

interface SimulateFlags {
  /** `-b`/`--behaviour`/`--behavior`: each a behaviour file when one exists at that path, else `CONTAINER[.PROBE]=SCRIPT`. */
  behaviour: string[];
  for: string;
  seed: string;
  output: OutputFormat;
  kubeletRestart?: boolean;
  sweep?: string;
  /** `--ui`: serve the finished timeline on the dashboard, at `--listen`. */
  ui?: boolean;
  listen?: string;
  /** `--threads N`: worker threads at most for more than one simulated node. */
  threads?: string;
  /** Simulate beyond {@link MAX_SIMULATION_WORK}. */
  force?: boolean;
}

const DEFAULT_FOR = '10m';
/** `--ui` without `--listen`: loopback, any free port. */
const DEFAULT_UI_LISTEN = '127.0.0.1:0';
/**
 * The most work (timer firings: probes falling due plus the nodes' own loops, see
 * `simulationWork`) a simulation starts without `--force`: about a minute of wall time on
 * two cores at the ~130,000 probes a second the benchmark measures, and above the
 * benchmark's 1,000 pods for an hour (4.1 million). A year of the demo pod is ~120 million.
 */
export const MAX_SIMULATION_WORK = 10_000_000;
/** Width of the `+1h2m3s` stamp column. */
const STAMP_WIDTH = 9;

export function registerSimulateCommand(program: Command, io: CliIO, setExit: (code: number) => void): void {
  const command = program
    .command('simulate')
    .description('Play out what the kubelet will do with these pods on virtual time, with containers behaving as you describe (images need not exist).')
    .argument('[files...]', 'manifests holding Pods or workloads (one pod per template), or - for standard input')
    .addOption(filenameOption())
    .option(
      '-b, --behaviour <CONTAINER[.PROBE]=SCRIPT|FILE>',
      "a container's behaviour: phases STATE[:DURATION] (down, up, fail, fail(N), hang, slow(D), redirect(URL), exit(N)), e.g. app=down:40s,up; or a YAML file of such lines (CONTAINER[.PROBE]: SCRIPT). Repeatable; scripts win over files",
      collect,
      [],
    )
    .addOption(new Option('--behavior <CONTAINER[.PROBE]=SCRIPT|FILE>', 'the same as --behaviour').argParser(collect).hideHelp())
    .option('--for <duration>', 'virtual time to simulate: 30s, 10m, 1h30m, or plain seconds', DEFAULT_FOR)
    .option('--seed <n>', 'seed of the jitter (same inputs and seed: same output)', '1')
    .addOption(outputOption(OUTPUTS, 'the run view stamped with virtual time, or JSON lines'))
    .option('--kubelet-restart', 'a freshly restarted kubelet (jittered first probes) instead of one running for a while')
    .option('--sweep <CONTAINER=FROM..TO/STEP>', "vary the length of the container's first phase and find where it starts crash-looping")
    .option('--ui', 'then serve the finished timeline on the dashboard (at --listen) until Ctrl-C')
    .option('--listen <host:port>', `with --ui: the dashboard's address, loopback only; port 0 picks a free port (default ${DEFAULT_UI_LISTEN})`)
    .option('--threads <n>', 'worker threads at most for more than 110 pods (a simulated node each 110; default: one per core up to 4 when the work is big; 1: none, least memory)')
    .option('--force', `simulate even when the estimated work exceeds ${MAX_SIMULATION_WORK.toLocaleString('en-US')} timer firings (about a minute)`)
    .action(async (files: string[], raw: SimulateFlags & { behavior?: string[]; filename?: string[] }) => {
      const flags: SimulateFlags = { ...raw, behaviour: [...(raw.behavior ?? []), ...raw.behaviour] };
      const offOutput = io === processIO ? exitWhenOutputCloses() : () => undefined;
      try {
        setExit(await runSimulate(inputPaths(files, raw.filename), flags, io));
      } finally {
        offOutput();
      }
    });
  addExamples(command, [
    'probelet simulate deploy.yaml -b app=down:40s,up --for 5m',
    'probelet simulate -f pod.yaml --behaviour behaviour.yaml --ui',
    'probelet simulate deploy.yaml -b app=down:30s,up --sweep app=10s..2m/10s',
  ]);
}

const OUTPUTS = ['text', 'json'] as const;

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

async function runSimulate(files: string[], flags: SimulateFlags, io: CliIO): Promise<number> {
  const forMs = parseDuration(flags.for, '--for');
  if (!/^\d{1,9}$/.test(flags.seed)) throw new CliUsageError(`--seed: expected a whole number (e.g. --seed 7), got ${JSON.stringify(flags.seed)}`);
  const seed = Number(flags.seed);
  // Any count from 1: more than there are nodes is the same as one a node.
  if (flags.threads !== undefined && !/^[1-9]\d*$/.test(flags.threads)) {
    throw new CliUsageError(`--threads: expected a whole number from 1 (e.g. --threads 1 for the least memory), got ${JSON.stringify(flags.threads)}`);
  }
  if (flags.listen !== undefined && flags.ui !== true) throw new CliUsageError(`--listen ${flags.listen}: the address is the dashboard's: add --ui`);
  const listen = flags.ui === true ? parseListen(flags.listen ?? DEFAULT_UI_LISTEN) : undefined;
  if (listen && flags.sweep !== undefined) throw new CliUsageError('--ui shows one simulation: it does not go with --sweep');
  if (files.length === 0) throw new CliUsageError('simulate: give at least one manifest (FILE, -f FILE, or - for standard input)');
  await requireReadable(files);
  const { scripts, behaviourFiles } = await splitBehaviours(flags.behaviour);

  const load = await loadManifests(files);
  const decoded = podsOf(load.objects);
  const stored = withoutRefusedWorkloads(decoded.pods);
  const found = stored.pods;
  const problems = [...decoded.problems, ...stored.problems];
  for (const problem of [...load.problems, ...problems]) io.stderr(`probelet: ${formatProblem(problem)}\n`);
  const note = skippedNote(load.skipped);
  if (note) io.stderr(`probelet: ${note}\n`);
  const admitted = admitForSimulation(found.map((p) => p.pod));
  printRejected(admitted, io);
  if (admitted.pods.length === 0) {
    io.stderr(`probelet: no pods to simulate in ${files.join(', ')}\n`);
    return EXIT_USAGE;
  }
  /** Documents or pods dropped: the rest is simulated, and the exit code says so at the end. */
  const dropped = load.problems.length + problems.length + admitted.errors.length;
  const pods = admitted.pods;
  refuseHugeWork(pods, forMs, flags);
  const behaviours = await readBehaviours(scripts, behaviourFiles, pods);
  const base = { pods, forMs, seed, kubeletRestart: flags.kubeletRestart === true, ...(flags.threads !== undefined ? { threads: Number(flags.threads) } : {}) };
  const sweepPlan = flags.sweep === undefined ? undefined : parseSweep(flags.sweep, behaviours, pods);
  // A sweep is one simulation per value.
  if (sweepPlan !== undefined) refuseHugeWork(pods, forMs * sweepPlan.valuesMs.length, flags);
  const finish = (): number => {
    if (dropped === 0) return EXIT_OK;
    io.stderr(`probelet: ${dropped} problem${dropped === 1 ? '' : 's'} in the input (above): what could be read was simulated\n`);
    return EXIT_USAGE;
  };

  if (sweepPlan !== undefined) {
    await runSweep(sweepPlan, base, behaviours, flags.output, io);
    return finish();
  }

  const out = stampedOutput(flags.output, io);
  if (flags.output === 'text') printPreamble(pods, behaviours, forMs, seed, io);
  else io.stdout(`${JSON.stringify({ type: 'simulate', seed, for: forMs / 1000, behaviours: behaviourList(pods, behaviours).map(({ init: _init, ...line }) => line) })}\n`);
  const terminal = { isTTY: false, columns: () => 80, rows: () => 24 };
  // JSON: run's lines (a `pod` line when the pod changes, a `containerStatus` line when one container does).
  const view =
    flags.output === 'json'
      ? createRunJsonView(out.io, terminal)
      : createLiveView({ output: flags.output, io: out.io, terminal, podNames: pods.map((p) => p.metadata?.name ?? ''), now: () => out.clockMs });
  const result = await simulate({
    ...base,
    record: listen !== undefined,
    behaviours,
    onPod: (pod, t, clockMs) => {
      out.at(t, clockMs);
      view.pod(pod);
    },
    onEvent: (event, t, clockMs) => {
      out.at(t, clockMs);
      view.event(event);
    },
  });
  view.close();
  if (flags.output === 'json') io.stdout(`${JSON.stringify(summaryJSON(result, behaviours))}\n`);
  else printSummary(result, behaviours, io);
  const code = finish();
  if (listen && result.timeline) await serveTimeline(result.timeline, listen, flags.output, io);
  return code;
}

/**
 * `-b`/`--behaviour` values: a path to an existing file is a behaviour file, anything else
 * a `CONTAINER[.PROBE]=SCRIPT`. A value that is neither says both readings in its error.
 */
async function splitBehaviours(values: readonly string[]): Promise<{ scripts: string[]; behaviourFiles: string[] }> {
  const scripts: string[] = [];
  const behaviourFiles: string[] = [];
  for (const value of values) {
    const isFile = await stat(value).then(
      (s) => s.isFile(),
      () => false,
    );
    if (isFile) behaviourFiles.push(value);
    else if (value.indexOf('=') > 0) scripts.push(value);
    else throw new CliUsageError(`--behaviour ${value}: no such file, and not CONTAINER[.PROBE]=SCRIPT: give a behaviour file that exists or e.g. -b app=down:30s,up`);
  }
  return { scripts, behaviourFiles };
}

/** Refuses, before anything runs, a simulation estimated to take minutes, unless `--force`. */
function refuseHugeWork(pods: readonly Pod[], totalMs: number, flags: SimulateFlags): void {
  const work = simulationWork(pods, totalMs);
  if (work <= MAX_SIMULATION_WORK || flags.force === true) return;
  const fits = Math.floor((MAX_SIMULATION_WORK / work) * totalMs / 1000) * 1000;
  const shorter = flags.sweep === undefined ? `a shorter --for (at most about ${formatGoDuration(fits)} for these pods)` : 'a shorter --for or fewer --sweep values';
  throw new CliUsageError(
    `--for ${flags.for}: about ${Math.round(work).toLocaleString('en-US')} timer firings to simulate (probes and the kubelet's own loops), more than the ${MAX_SIMULATION_WORK.toLocaleString('en-US')} that take about a minute. Give ${shorter}, or add --force to run it anyway`,
  );
}

/** `--ui`: the finished simulation on the dashboard, until Ctrl-C (or SIGTERM). */
async function serveTimeline(timeline: Timeline, listen: ListenAddress, output: OutputFormat, io: CliIO): Promise<void> {
  let server: RunningServer;
  try {
    server = await startServer(timelineView(timeline), listen);
  } catch (err) {
    throw new CliUsageError(`--listen ${listen.host}:${listen.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (output === 'json') io.stdout(`${JSON.stringify({ type: 'ui', url: `${server.url}/` })}\n`);
  else io.stdout(`\nDashboard of this simulation: ${server.url}/ (Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    const off = processSignals.listen(() => {
      off();
      resolve();
    });
  });
  await server.close();
}

/**
 * Output that stamps every line with the time: `+1m30s ` in front (the node's clock since the
 * pods' creation, cut to the second: see `stamp`), or `"t":90` in a JSON line (virtual
 * seconds since the start, exact). The live view's ages are read on the same clock
 * (`clockMs`), so a stamp and the AGE beside it agree.
 */
function stampedOutput(format: OutputFormat, io: CliIO): { io: CliIO; clockMs: number; at(tMs: number, clockMs: number): void } {
  let tMs = 0;
  const state = {
    clockMs: SIMULATION_ORIGIN_MS,
    at(t: number, clockMs: number): void {
      tMs = t;
      state.clockMs = clockMs;
    },
    io: {
      stdout: (text: string): void => {
        const lines = text.split('\n');
        if (lines.at(-1) === '') lines.pop();
        for (const line of lines) {
          if (format === 'json') {
            const { type, ...rest } = JSON.parse(line) as Record<string, unknown>;
            io.stdout(`${JSON.stringify({ type, t: tMs / 1000, ...rest })}\n`);
          } else {
            io.stdout(`${stamp(state.clockMs - SIMULATION_ORIGIN_MS).padEnd(STAMP_WIDTH)}${line}\n`);
          }
        }
      },
      stderr: (text: string): void => io.stderr(text),
    },
  };
  return state;
}

interface BehaviourLine {
  container: string;
  probe?: string;
  script: string;
  given: boolean;
  /** A plain init container (its default script completes). */
  init?: boolean;
}

function behaviourList(pods: readonly Pod[], behaviours: Map<string, ContainerBehaviour>): BehaviourLine[] {
  const lines: BehaviourLine[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      if (seen.has(c.name)) continue;
      seen.add(c.name);
      const b = behaviours.get(c.name);
      const init = isPlainInit(pod, c);
      lines.push({ container: c.name, script: formatScript(containerScript(behaviours, c.name, init)), given: b?.script !== undefined, ...(init ? { init } : {}) });
      for (const [probe, script] of Object.entries(b?.probes ?? {})) lines.push({ container: c.name, probe, script: formatScript(script), given: true });
    }
  }
  return lines;
}

function printPreamble(pods: readonly Pod[], behaviours: Map<string, ContainerBehaviour>, forMs: number, seed: number, io: CliIO): void {
  const nameOf = (p: Pod | undefined): string => p?.metadata?.name ?? '';
  const nodes = Math.ceil(pods.length / MAX_PODS_PER_NODE);
  // More than a node's worth: a count and the ends of the range, not a line of a thousand names.
  const what = nodes <= 1 ? pods.map(nameOf).join(', ') : `${pods.length} pods (${nameOf(pods[0])} … ${nameOf(pods.at(-1))}) on ${nodes} nodes of up to ${MAX_PODS_PER_NODE}`;
  io.stdout(`Simulating ${what} for ${formatGoDuration(forMs)} of virtual time (seed ${seed}); behaviours:\n`);
  const rows = behaviourList(pods, behaviours).map((l) => [
    `  ${l.probe ? `${l.container}.${l.probe}` : l.container}`,
    l.script,
    l.given ? '' : l.init ? '(no script given: an init container completes)' : '(no script given: up from the start)',
  ]);
  for (const row of formatTable(rows)) io.stdout(`${row.trimEnd()}\n`);
  io.stdout('\n');
}

function seconds(ms: number | null): number | null {
  return ms === null ? null : ms / 1000;
}

/**
 * The `-o json` summary line. `neverReady` carries the text summary's reason (which container
 * held the pod back, in which state) when the pod was never Ready, else null: a field added
 * after the others, so readers of the earlier shape are not broken.
 */
function summaryJSON(result: SimulationResult, behaviours: Map<string, ContainerBehaviour>): object {
  return {
    type: 'summary',
    t: result.endMs / 1000,
    pods: result.pods.map((p) => ({
      pod: p.pod.metadata?.name ?? '',
      namespace: p.pod.metadata?.namespace ?? 'default',
      readyAt: seconds(p.readyAtMs),
      neverReady: p.readyAtMs === null ? explainNeverReady(p, behaviours, result.endMs) : null,
      containers: p.containers.map((c) => ({
        name: c.name,
        readyAt: seconds(c.readyAtMs),
        restarts: c.restarts,
        kills: c.kills.map((k) => ({ t: k.tMs / 1000, reason: k.message })),
        state: c.state,
        reason: c.reason,
      })),
    })),
  };
}

function printSummary(result: SimulationResult, behaviours: Map<string, ContainerBehaviour>, io: CliIO): void {
  // The nodes' clocks differ by less than a second: the first pod's stamps the end.
  const first = result.pods[0];
  io.stdout(`\nSummary at ${first ? podStamp(first, result.endMs) : stamp(result.endMs)} (${result.probes} probes simulated)\n`);
  for (const p of result.pods) {
    const ns = p.pod.metadata?.namespace ?? 'default';
    const ready = p.readyAtMs === null ? `never Ready: ${explainNeverReady(p, behaviours, result.endMs)}` : `Ready at ${podStamp(p, p.readyAtMs)}`;
    io.stdout(`pod ${ns}/${p.pod.metadata?.name ?? ''}: ${ready}\n`);
    for (const c of p.containers) {
      const spec = [...(p.pod.spec?.initContainers ?? []), ...(p.pod.spec?.containers ?? [])].find((x) => x.name === c.name);
      const ready = c.readyAtMs === null ? 'never ready' : `ready at ${podStamp(p, c.readyAtMs)}`;
      io.stdout(`  ${c.name}: ${ready}, ${c.restarts} restart${c.restarts === 1 ? '' : 's'}, now ${c.state}${c.reason ? ` (${c.reason})` : ''}\n`);
      for (const restart of restartCauses(p, c, behaviours.get(c.name)?.script !== undefined)) io.stdout(`    ${restart}\n`);
      if (spec) for (const kill of c.kills) io.stdout(`    ${explainKill(kill, spec, behaviours, p)}\n`);
    }
  }
}

/** Exits that no kill caused (the script's `exit(N)`, or a plain init container completing by default), each a restart unless the policy says no. */
function restartCauses(p: PodOutcome, c: PodOutcome['containers'][number], given: boolean): string[] {
  const why = (code: number): string => (given ? `exit(${code}) in its script` : 'an init container completes by default');
  return c.exits.map((e) => `exited with code ${e.code} at ${podStamp(p, e.tMs)} (${why(e.code)})`);
}

// --- sweep ------------------------------------------------------------------------------

interface SweepRow {
  valueMs: number;
  readyAtMs: number | null;
  /** `readyAtMs` stamped on its pod's node clock, as the text output stamps times. */
  readyAt: string;
  restarts: number;
  state: string;
  /** Killed at least once (by a probe): the row's restarts include a kill's. */
  killed: boolean;
}

async function runSweep(
  plan: SweepPlan,
  base: Omit<Parameters<typeof simulate>[0], 'behaviours'>,
  behaviours: Map<string, ContainerBehaviour>,
  output: OutputFormat,
  io: CliIO,
): Promise<void> {
  const rows: SweepRow[] = [];
  for (const valueMs of plan.valuesMs) {
    const result = await simulate({ ...base, behaviours: sweptBehaviours(behaviours, plan.container, valueMs) });
    const found = result.pods.flatMap((p) => p.containers.filter((c) => c.name === plan.container).map((c) => ({ p, c })));
    const outcomes = found.map(({ c }) => c);
    // Ready when the last of them was, if all were.
    const allReady = found.every(({ c }) => c.readyAtMs !== null);
    const last = allReady ? found.reduce<(typeof found)[number] | undefined>((l, f) => (l === undefined || (f.c.readyAtMs ?? 0) > (l.c.readyAtMs ?? 0) ? f : l), undefined) : undefined;
    const readyAtMs = last?.c.readyAtMs ?? null;
    const restarts = outcomes.reduce((sum, c) => sum + c.restarts, 0);
    const kills = outcomes.reduce((sum, c) => sum + c.kills.length, 0);
    const state = outcomes.map((c) => `${c.state}${c.reason ? ` (${c.reason})` : ''}`).join(', ');
    rows.push({ valueMs, readyAtMs, readyAt: last && readyAtMs !== null ? podStamp(last.p, readyAtMs) : 'never', restarts, state, killed: kills > 0 });
    if (output === 'json') {
      io.stdout(`${JSON.stringify({ type: 'sweep', value: valueMs / 1000, readyAt: seconds(readyAtMs), restarts, state: outcomes[0]?.state ?? '' })}\n`);
    }
  }
  const threshold = rows.find((r) => r.killed || r.readyAtMs === null)?.valueMs;
  if (output === 'json') {
    io.stdout(`${JSON.stringify({ type: 'threshold', value: threshold === undefined ? null : threshold / 1000 })}\n`);
    return;
  }
  io.stdout(`Sweeping the first phase of ${plan.container}'s script over ${formatGoDuration(base.forMs)} of virtual time each:\n`);
  const table = formatTable([
    ['FIRST PHASE', 'READY AT', 'RESTARTS', 'AT THE END'],
    ...rows.map((r) => [formatGoDuration(r.valueMs), r.readyAt, String(r.restarts), r.state]),
  ]);
  for (const line of table) io.stdout(`${line.trimEnd()}\n`);
  for (const line of sweepConclusion(plan, rows, base.forMs)) io.stdout(`${line}\n`);
}

/**
 * What the table shows, in words: from which first phase the container is restarted (killed,
 * yet it may end Ready after the back-off) and from which it is never Ready within the run —
 * two thresholds, since a start-up just past the probes' allowance is often survived after a
 * restart or a few.
 */
function sweepConclusion(plan: SweepPlan, rows: readonly SweepRow[], forMs: number): string[] {
  const from = (valueMs: number): string =>
    valueMs === plan.valuesMs[0] ? `already at ${formatGoDuration(valueMs)}, the start of the range` : `when its start-up takes ≥ ${formatGoDuration(valueMs)}`;
  const restarted = rows.find((r) => r.killed)?.valueMs;
  const neverReady = rows.find((r) => r.readyAtMs === null)?.valueMs;
  if (restarted === undefined && neverReady === undefined) {
    return [`${plan.container} starts fine across the whole range (up to ${formatGoDuration(plan.valuesMs.at(-1) ?? 0)})`];
  }
  const lines: string[] = [];
  if (restarted !== undefined) lines.push(`${plan.container} is restarted ${from(restarted)}`);
  if (neverReady !== undefined) lines.push(`${plan.container} is never Ready in ${formatGoDuration(forMs)} ${from(neverReady)}`);
  return lines;
}
