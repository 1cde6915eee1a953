/**
 * `probelet check PATH...`: static probe lint and timing budgets for any manifest, with
 * nothing run. Thin: loading is `api/documents`, checking `check/run`, output `check/output`.
 */
import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { formatProblem, loadManifests, notManifestsNote, skippedNote, type LoadOptions, type ManifestLoad } from '../api/documents.js';
import { foldedInto } from '../check/fold.js';
import { toJson, toSarif, toText } from '../check/output.js';
import { findRule, ruleInfos } from '../check/rules/index.js';
import { createChecker } from '../check/run.js';
import type { Severity } from '../check/types.js';
import type { Pod } from '../api/types.js';
import { listClusterWorkloads } from '../explain/cluster-objects.js';
import { liveEvidence, MAX_PODS, type LiveEvidence } from '../explain/live-evidence.js';
import { readClients, SourceError } from '../explain/source.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { addExamples, filenameOption, inputPaths, outputOption } from './flags.js';
import { requireReadable } from './inputs.js';
import { CliUsageError, type CliIO } from './io.js';
import { parseDuration } from './run-flags.js';

const OUTPUTS = ['text', 'json', 'sarif'] as const;
const FAIL_ON = ['error', 'warning', 'info', 'never'] as const;
const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

export interface CheckFlags {
  output: (typeof OUTPUTS)[number];
  filename?: string[];
  failOn: (typeof FAIL_ON)[number];
  startupTime: string[];
  probeP99?: string[];
  disable: string[];
  explain?: string;
  rules?: boolean;
  /** `--cluster`: the workloads of a live cluster instead of files. */
  cluster?: boolean;
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  kubeconfig?: string;
}

export function registerCheckCommand(program: Command, io: CliIO, setExit: (code: number) => void, load: LoadOptions = {}, now: () => number = Date.now): void {
  const command = program
    .command('check')
    .description('Lint the probes of any workload manifest and compute how long each container has before the kubelet kills it or takes it out of service — without running anything.')
    .argument('[paths...]', 'files, folders (*.yaml, *.yml, *.json, recursively) or - for stdin')
    .addOption(filenameOption())
    .addOption(outputOption(OUTPUTS, 'output format'))
    .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding has this severity or worse').choices(FAIL_ON).default('error'))
    .option('--startup-time <[pod/]container=duration>', 'how long a container needs to start, e.g. web=40s or api/web=40s (pod = object name or run\'s pod name; repeatable)', collect, [])
    .option('--probe-p99 <[pod/]container.probe=duration>', 'a probe duration measured at p99 by probelet run, e.g. web.liveness=0.9s (repeatable)', collect, [])
    .option('--disable <rules>', 'rule ids to turn off, comma-separated (repeatable)', collect, [])
    .option('--explain <rule>', "print a rule's text: what, why, fix, example")
    .option('--rules', 'list every rule with its severity and what it checks')
    .option('--cluster', "check the workloads running in a cluster (read-only) instead of files")
    .option('-n, --namespace <namespace>', "with --cluster: the namespace (default: the kubeconfig context's)")
    .option('-A, --all-namespaces', 'with --cluster: every namespace')
    .option('-l, --selector <selector>', 'with --cluster: only workloads with these labels (e.g. app=web,tier!=db)')
    .option('--kubeconfig <file>', 'with --cluster: the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)')
    .action(async (paths: string[], flags: CheckFlags) => {
      setExit(await runCheck(inputPaths(paths, flags.filename), flags, io, load, now));
    });
  addExamples(command, ['probelet check deploy.yaml', 'probelet check -f k8s/ --startup-time web=40s', 'helm template . | probelet check -', 'probelet check --cluster -A -o sarif']);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** One `probelet check` run; returns the exit code. Bad flags throw CliUsageError (exit 2). */
export async function runCheck(paths: readonly string[], flags: CheckFlags, io: CliIO, load: LoadOptions = {}, now: () => number = Date.now): Promise<number> {
  if (flags.explain !== undefined) return explain(flags.explain, io);
  if (flags.rules === true) return listRules(io);
  const disabled = parseDisable(flags.disable);
  const startupTimes = parseStartupTimes(flags.startupTime);
  const measuredP99 = parseProbeP99(flags.probeP99 ?? []);
  const clusterFlags = [flags.namespace !== undefined ? '-n' : '', flags.allNamespaces === true ? '-A' : '', flags.selector !== undefined ? '-l' : '', flags.kubeconfig !== undefined ? '--kubeconfig' : ''].filter(Boolean);
  if (flags.cluster !== true && clusterFlags.length > 0) throw new CliUsageError(`check: ${clusterFlags.join(', ')} go${clusterFlags.length === 1 ? 'es' : ''} with --cluster`);
  if (flags.cluster === true && paths.length > 0) throw new CliUsageError('check --cluster reads the workloads from the cluster: give no PATH (or drop --cluster to check files)');
  if (flags.cluster === true && flags.allNamespaces === true && flags.namespace !== undefined) throw new CliUsageError('check --cluster: give -n NAMESPACE or -A, not both');
  if (flags.cluster !== true && paths.length === 0) throw new CliUsageError('check: give at least one PATH (a file, a folder, or - for standard input), or --cluster');
  await requireReadable(paths);

  // Objects are checked as they are decoded and then dropped: only findings and budgets are kept.
  const checker = createChecker({ startupTimes, measuredP99, disabled });
  let workloads = 0;
  const sink = (object: Parameters<typeof checker.add>[0]): void => {
    workloads++;
    checker.add(object);
  };
  let loaded: ManifestLoad;
  let live: LiveEvidence[] | undefined;
  if (flags.cluster === true) {
    try {
      const clients = readClients(flags.kubeconfig);
      const scope = { allNamespaces: flags.allNamespaces === true, namespace: flags.namespace ?? clients.namespace, ...(flags.selector !== undefined ? { labelSelector: flags.selector } : {}) };
      const restarted: Pod[] = [];
      const { notes } = await listClusterWorkloads(clients, scope, sink, (pod) => restarted.push(pod));
      for (const note of notes) io.stderr(`probelet: ${note}\n`);
      const found = await liveEvidence(clients, restarted, now()).catch((err: unknown) => {
        // Events that may not be read cost the live evidence only, never the findings.
        if (!(err instanceof SourceError)) throw err;
        io.stderr(`probelet: no live evidence: ${err.message}\n`);
        return { evidence: [], skipped: 0 };
      });
      live = found.evidence;
      if (found.skipped > 0) io.stderr(`probelet: ${found.skipped} more restarted pods not explained (the ${MAX_PODS} most restarted were): probelet explain pod/NAME for one\n`);
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      io.stderr(`probelet: ${err.message}\n`);
      return EXIT_USAGE;
    }
    loaded = { objects: [], problems: [], skipped: [] };
  } else {
    loaded = await loadManifests(paths, { ...load, sink });
  }
  const result = checker.finish(loaded.problems);
  for (const problem of result.problems) io.stderr(`${formatProblem(problem)}\n`);
  // After the problems: with some of the input unread, a key may be for what could not be read.
  const where = result.problems.length > 0 ? 'in the input that could be read' : 'in the input';
  for (const { figure, key, missing } of checker.unmatchedKeys()) {
    const flag = figure === 'startupTime' ? '--startup-time' : '--probe-p99';
    if (missing === 'probe') {
      const dot = key.lastIndexOf('.');
      io.stderr(`probelet: ${flag} ${key}: ${key.slice(0, dot)} has no ${key.slice(dot + 1)} probe ${where}; ignored\n`);
    } else {
      io.stderr(`probelet: ${flag} ${key}: no container of that name ${where} (give CONTAINER, or POD/CONTAINER with POD the object's name or the pod name probelet run printed); ignored\n`);
    }
  }
  if (flags.output === 'json') io.stdout(live === undefined ? toJson({ ...result, skipped: loaded.skipped }) : withLive(toJson({ ...result, skipped: loaded.skipped }), live));
  else if (flags.output === 'sarif') io.stdout(toSarif(result, ruleInfos, packageVersion()));
  else {
    io.stdout(toText(result));
    if (live !== undefined && live.length > 0) io.stdout(liveText(live));
    const note = skippedNote(loaded.skipped);
    if (note !== '') io.stdout(`${note}\n`);
  }
  const folderNote = notManifestsNote(loaded.notManifests);
  if (folderNote !== '') io.stderr(`probelet: ${folderNote}\n`);
  if (workloads === 0 && result.problems.length === 0 && flags.cluster === true) {
    io.stderr(`probelet: no workload in ${flags.allNamespaces === true ? 'any namespace' : `namespace ${flags.namespace ?? '(the context\'s)'}`}${flags.selector !== undefined ? ` with labels ${flags.selector}` : ''}\n`);
    return EXIT_OK;
  }
  if (workloads === 0 && result.problems.length === 0) {
    // A green check of nothing would pass a CI job that points at the wrong file.
    const passed = loaded.skipped.length > 0 ? ` (${skippedNote(loaded.skipped)})` : '';
    io.stderr(`probelet: no workload was checked: ${paths.join(', ')} hold${paths.length === 1 ? 's' : ''} no Pod, workload or PodTemplate${passed}\n`);
    return EXIT_USAGE;
  }
  // Input problems exit 2 whatever --fail-on says: part of the input was not checked.
  if (result.problems.length > 0) {
    io.stderr(`probelet: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'} in the input (above); everything else was checked\n`);
    return EXIT_USAGE;
  }
  if (flags.failOn === 'never') return EXIT_OK;
  const threshold = RANK[flags.failOn];
  return result.findings.some((f) => RANK[f.severity] >= threshold) ? EXIT_FAILED : EXIT_OK;
}

/** check's JSON with `live` added after its keys (nothing before it changed). */
function withLive(json: string, live: readonly LiveEvidence[]): string {
  return `${JSON.stringify({ ...(JSON.parse(json) as Record<string, unknown>), live }, null, 2)}\n`;
}

/** The restarts the probes caused, per workload, after the findings. */
function liveText(live: readonly LiveEvidence[]): string {
  const lines = live.map((e) => `  ${e.object.kind} ${e.object.namespace}/${e.object.name}: pod ${e.pod} container ${e.container}: ${e.cause} — ${e.summary}`);
  return `\nrestarted by its probes (probelet explain pod/NAME -n NAMESPACE for the evidence and the fix):\n${lines.join('\n')}\n`;
}

function explain(id: string, io: CliIO): number {
  const rule = findRule(id);
  if (!rule) throw new CliUsageError(`--explain: unknown rule ${JSON.stringify(id)}; rules: ${ruleInfos.map((r) => r.id).join(', ')}`);
  const equivalents = rule.equivalents?.length ? `\nEquivalents in other tools: ${rule.equivalents.join('; ')}\n` : '';
  io.stdout(`${rule.id} (${rule.severity}): ${rule.summary}\n\n${rule.explain}\n${equivalents}`);
  return EXIT_OK;
}

/** `--rules`: one line per rule, `id  severity  summary` (the summary says why it matters). */
function listRules(io: CliIO): number {
  const width = Math.max(...ruleInfos.map((r) => r.id.length));
  const lines = ruleInfos.map((r) => {
    const folds = foldedInto(r.id);
    const also = folds.length > 0 ? ` (reported instead of ${folds.join(', ')} for the same container)` : '';
    return `${r.id.padEnd(width)}  ${r.severity.padEnd(7)}  ${r.summary}${also}`;
  });
  // One write, as the other outputs: `--rules | head` then ends quietly.
  io.stdout(`${lines.join('\n')}\n\nprobelet check --explain RULE for why, the fix and an example; --disable RULE,… or the probelet.dev/ignore annotation to turn rules off.\n`);
  return EXIT_OK;
}

function parseDisable(values: readonly string[]): Set<string> {
  const ids = new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== ''));
  for (const id of ids) {
    if (!findRule(id)) throw new CliUsageError(`--disable: unknown rule ${JSON.stringify(id)}; rules: ${ruleInfos.map((r) => r.id).join(', ')}`);
  }
  return ids;
}

function parseStartupTimes(values: readonly string[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const value of values) {
    const eq = value.indexOf('=');
    const container = value.slice(0, eq).trim();
    if (eq <= 0 || !wellFormedKey(container)) throw new CliUsageError(`--startup-time: expected [POD/]CONTAINER=DURATION (e.g. web=40s or web-0/app=40s), got ${JSON.stringify(value)}`);
    setOnce(times, container, parseDuration(value.slice(eq + 1), '--startup-time') / 1000, '--startup-time');
  }
  return times;
}

/** `CONTAINER` or `POD/CONTAINER`, neither part empty. */
function wellFormedKey(key: string): boolean {
  const slash = key.indexOf('/');
  return key !== '' && (slash < 0 || (slash > 0 && slash < key.length - 1));
}

/** A key given twice would silently keep one of its values: say so instead. */
function setOnce(times: Map<string, number>, key: string, value: number, flag: string): void {
  if (times.has(key)) throw new CliUsageError(`${flag}: ${key} is given twice; give each [POD/]CONTAINER once`);
  times.set(key, value);
}

const PROBE_KINDS = ['liveness', 'readiness', 'startup'];

/** `--probe-p99 app.liveness=0.9s` → `app.liveness` → 0.9 (seconds). */
function parseProbeP99(values: readonly string[]): Map<string, number> {
  const times = new Map<string, number>();
  for (const value of values) {
    const eq = value.indexOf('=');
    const key = value.slice(0, eq).trim();
    const dot = key.lastIndexOf('.');
    if (eq <= 0 || dot <= 0 || !PROBE_KINDS.includes(key.slice(dot + 1)) || !wellFormedKey(key.slice(0, dot))) {
      throw new CliUsageError(`--probe-p99: expected [POD/]CONTAINER.PROBE=DURATION with PROBE one of ${PROBE_KINDS.join(', ')} (e.g. web.liveness=0.9s), got ${JSON.stringify(value)}`);
    }
    setOnce(times, key, parseDuration(value.slice(eq + 1), '--probe-p99') / 1000, '--probe-p99');
  }
  return times;
}

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../package.json') as { version: string }).version;
}
