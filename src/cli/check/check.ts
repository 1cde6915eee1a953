/**
 * `probelet check PATH...`: static probe lint and timing budgets for any manifest, with
 * nothing run. Thin: loading is `api/documents`, checking `check/run`, output `check/output`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, relative, sep } from 'node:path';
import { Command, Option } from 'commander';
import { formatProblem, loadManifests, notManifestsNote, parseManifestDocuments, skippedNote, type LoadOptions, type ManifestLoad } from '../../api/documents.js';
import { foldedInto } from '../../check/fold.js';
import { baselineText, parseBaseline } from '../../check/baseline.js';
import { noteLine, toJson, toSarif, toText, type CheckOutput, type SkippedFile } from '../../check/output.js';
import { findRule, ruleInfos, VALIDATION_RULE_ID } from '../../check/rules/index.js';
import { createChecker, type CheckResult } from '../../check/run.js';
import type { Finding, Severity } from '../../check/types.js';
import { matchesGlob } from '../../util/glob.js';
import { CONFIG_FILE, findConfig, loadConfig } from './config.js';
import { renderHelm, renderKustomize, type Rendered } from './render.js';
import type { Pod } from '../../api/types.js';
import type { LiveEvidence } from '../../explain/live-evidence.js';
import { SourceError } from '../../explain/source-error.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { addExamples, filenameOption, inputPaths, outputOption } from '../flags.js';
import { unreadablePaths } from '../inputs.js';
import { CliUsageError, type CliIO } from '../io.js';
import { parseDuration } from '../run/flags.js';

const OUTPUTS = ['text', 'json', 'sarif'] as const;
const FAIL_ON = ['error', 'warning', 'info', 'never'] as const;
const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };
const NOT_READ = 'not *.yaml, *.yml or *.json';
/** A file name with a manifest's extension inside it (`web.yaml.golden`, `pod.json.injected`). */
const MANIFEST_LIKE = /\.(?:ya?ml|json)\./i;

export interface CheckFlags {
  output: (typeof OUTPUTS)[number];
  filename?: string[];
  /** Unset: `.probelet.yaml`'s `fail-on`, else `error`. */
  failOn?: (typeof FAIL_ON)[number];
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
  /** `--config FILE`; `false` (`--no-config`): none, not even one found upward. */
  config?: string | false;
  showSuppressed?: boolean;
  baseline?: string;
  writeBaseline?: string;
  /** `--helm CHART`: rendered with `helm template`; `-f`/`--values` are then values files. */
  helm?: string;
  values?: string[];
  set?: string[];
  /** `--kustomize DIR`: rendered with `kustomize build` or `kubectl kustomize`. */
  kustomize?: string;
  /** Named files holding no Kubernetes object are passed over, as in a folder (pre-commit hands every changed YAML file). */
  skipNonManifests?: boolean;
}

export function registerCheckCommand(program: Command, io: CliIO, setExit: (code: number) => void, load: LoadOptions = {}, now: () => number = Date.now): void {
  const command = program
    .command('check')
    .description('Lint the probes of any workload manifest and compute how long each container has before the kubelet kills it or takes it out of service — without running anything.')
    .argument('[paths...]', 'files, folders (*.yaml, *.yml, *.json, recursively) or - for stdin')
    .addOption(filenameOption())
    .addOption(outputOption(OUTPUTS, 'output format'))
    .addOption(new Option('--fail-on <severity>', 'exit 1 when a finding has this severity or worse (default: error, or fail-on in .probelet.yaml)').choices(FAIL_ON))
    .option('--startup-time <[pod/]container=duration>', 'how long a container needs to start, e.g. web=40s or api/web=40s (pod = object name or run\'s pod name; repeatable)', collect, [])
    .option('--probe-p99 <[pod/]container.probe=duration>', 'a probe duration measured at p99 by probelet run, e.g. web.liveness=0.9s (repeatable)', collect, [])
    .option('--disable <rules>', 'rule ids to turn off, comma-separated (repeatable)', collect, [])
    .option('--config <file>', `the configuration file (default: the nearest ${CONFIG_FILE} from the working directory up)`)
    .option('--no-config', `read no configuration file`)
    .option('--show-suppressed', 'list the findings an annotation or the baseline suppressed (they are always counted)')
    .option('--baseline <file>', 'findings in this baseline (written by --write-baseline) are suppressed: only new ones fail')
    .option('--write-baseline <file>', 'write every finding of this run to FILE as the baseline to accept')
    .option('--helm <chart>', 'check the chart as `helm template` renders it (-f/--values FILE and --set K=V go to helm); findings name their template')
    .option('--values <file>', 'with --helm: a values file (repeatable; -f too)', collect, [])
    .option('--set <key=value>', 'with --helm: a value (repeatable)', collect, [])
    .option('--kustomize <dir>', 'check the overlay as `kustomize build` (or `kubectl kustomize`) renders it')
    .option('--skip-non-manifests', 'pass over named files that hold no Kubernetes object, as in a folder (for hooks handed every changed YAML file)')
    .option('--explain <rule>', "print a rule's text: what, why, fix, example")
    .option('--rules', 'list every rule with its severity and what it checks')
    .option('--cluster', "check the workloads running in a cluster (read-only) instead of files")
    .option('-n, --namespace <namespace>', "with --cluster: the namespace (default: the kubeconfig context's)")
    .option('-A, --all-namespaces', 'with --cluster: every namespace')
    .option('-l, --selector <selector>', 'with --cluster: only workloads with these labels (e.g. app=web,tier!=db)')
    .option('--kubeconfig <file>', 'with --cluster: the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)')
    .action(async (paths: string[], flags: CheckFlags) => {
      // With --helm, -f is helm's: a values file.
      const rendering = flags.helm !== undefined || flags.kustomize !== undefined;
      setExit(await runCheck(rendering ? paths : inputPaths(paths, flags.filename), rendering ? { ...flags, values: [...(flags.filename ?? []), ...(flags.values ?? [])] } : flags, io, load, now));
    });
  addExamples(command, ['probelet check deploy.yaml', 'probelet check -f k8s/ --startup-time web=40s', 'helm template . | probelet check -', 'probelet check k8s/ -o sarif > probelet.sarif', 'probelet check --cluster -A -o sarif']);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** What the configuration file and the flags come to, flags first. */
interface Settings {
  disabled: Set<string>;
  severities: Map<string, Severity>;
  startupTimes: Map<string, number>;
  measuredP99: Map<string, number>;
  failOn: (typeof FAIL_ON)[number];
  exclude: { base: string; globs: readonly string[] } | undefined;
}

async function settingsOf(flags: CheckFlags): Promise<Settings> {
  const path = flags.config === false ? undefined : (flags.config ?? (await findConfig(process.cwd())));
  const config = path === undefined ? undefined : await loadConfig(path, (id) => findRule(id) !== undefined, ruleInfos.map((r) => r.id));
  const disabled = parseDisable(flags.disable);
  const severities = new Map<string, Severity>();
  for (const [id, setting] of config?.rules ?? []) {
    if (setting === 'off') disabled.add(id);
    else if (setting !== 'on') severities.set(id, setting);
  }
  // The file's figures, then the flags' over them: a flag given on the command line wins.
  const startupTimes = new Map([...parseStartupTimes(config?.startupTime ?? [], `${path}: startup-time`), ...parseStartupTimes(flags.startupTime, '--startup-time')]);
  const measuredP99 = new Map([...parseProbeP99(config?.probeP99 ?? [], `${path}: probe-p99`), ...parseProbeP99(flags.probeP99 ?? [], '--probe-p99')]);
  const exclude = config && config.exclude.length > 0 ? { base: dirname(config.path), globs: config.exclude } : undefined;
  return { disabled, severities, startupTimes, measuredP99, failOn: flags.failOn ?? config?.failOn ?? 'error', exclude };
}

/** One `probelet check` run; returns the exit code. Bad flags throw CliUsageError (exit 2). */
export async function runCheck(paths: readonly string[], flags: CheckFlags, io: CliIO, load: LoadOptions = {}, now: () => number = Date.now): Promise<number> {
  if (flags.explain !== undefined) return explain(flags.explain, io);
  if (flags.rules === true) return listRules(io);
  const settings = await settingsOf(flags);
  const clusterFlags = [flags.namespace !== undefined ? '-n' : '', flags.allNamespaces === true ? '-A' : '', flags.selector !== undefined ? '-l' : '', flags.kubeconfig !== undefined ? '--kubeconfig' : ''].filter(Boolean);
  if (flags.cluster !== true && clusterFlags.length > 0) throw new CliUsageError(`check: ${clusterFlags.join(', ')} go${clusterFlags.length === 1 ? 'es' : ''} with --cluster`);
  if (flags.cluster === true && paths.length > 0) throw new CliUsageError('check --cluster reads the workloads from the cluster: give no PATH (or drop --cluster to check files)');
  if (flags.cluster === true && (flags.helm !== undefined || flags.kustomize !== undefined)) throw new CliUsageError('check --cluster reads the workloads from the cluster: give no --helm or --kustomize beside it');
  if (flags.cluster === true && flags.allNamespaces === true && flags.namespace !== undefined) throw new CliUsageError('check --cluster: give -n NAMESPACE or -A, not both');
  if (flags.helm !== undefined && flags.kustomize !== undefined) throw new CliUsageError('check: give --helm or --kustomize, not both');
  const rendered = flags.helm !== undefined ? await renderHelm(flags.helm, flags.values ?? [], flags.set ?? []) : flags.kustomize !== undefined ? await renderKustomize(flags.kustomize) : undefined;
  if (rendered && paths.length > 0) throw new CliUsageError(`check: ${flags.helm !== undefined ? '--helm' : '--kustomize'} checks what it renders: give no PATH beside it (${paths.join(', ')})`);
  if (rendered === undefined && (flags.values?.length || flags.set?.length)) throw new CliUsageError('check: --values and --set go with --helm');
  if (paths.length === 0 && !rendered && flags.cluster !== true) throw new CliUsageError('check: give at least one PATH (a file, a folder, or - for standard input), or --cluster');
  const baseline = flags.baseline === undefined ? undefined : { prints: await readBaseline(flags.baseline), by: `baseline ${flags.baseline}` };

  const unreadable = await unreadablePaths(paths);
  if (unreadable.length > 0) {
    // A CI upload step must never get an empty file: the document is written, with the problem.
    const problems = unreadable.map((u) => ({ source: u.path, message: u.message }));
    if (flags.output !== 'text') writeDocument(flags.output, { findings: [], containers: [], problems }, io);
    io.stderr(`${unreadable.map((u) => `probelet: ${u.path}: ${u.message}`).join('\n')}\nprobelet: nothing was started (fix the path${unreadable.length > 1 ? 's' : ''} above)\n`);
    return EXIT_USAGE;
  }

  // Objects are checked as they are decoded and then dropped: only findings and budgets are kept.
  const checker = createChecker({ startupTimes: settings.startupTimes, measuredP99: settings.measuredP99, disabled: settings.disabled, severities: settings.severities, ...(baseline ? { baseline } : {}) });
  let workloads = 0;
  const sink = (object: Parameters<typeof checker.add>[0]): void => {
    workloads++;
    checker.add(object);
  };
  const exclude = settings.exclude;
  let loaded: ManifestLoad;
  let live: LiveEvidence[] | undefined;
  if (flags.cluster === true) {
    try {
      // The API client is loaded only for --cluster: a command's start opens few files (see explain/source-error.ts).
      const { readClients } = await import('../../explain/source.js');
      const { listClusterWorkloads } = await import('../../explain/cluster-objects.js');
      const { liveEvidence, MAX_PODS } = await import('../../explain/live-evidence.js');
      const clients = readClients(flags.kubeconfig);
      try {
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
      } finally {
        clients.close();
      }
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      io.stderr(`probelet: ${err.message}\n`);
      return EXIT_USAGE;
    }
    loaded = { objects: [], problems: [], skipped: [] };
  } else if (rendered) {
    loaded = parseManifestDocuments(rendered.text, rendered.source, sink);
  } else {
    loaded = await loadManifests(paths, {
      ...load,
      ...(flags.skipNonManifests ? { passOverNamed: true } : {}),
      ...(exclude ? { exclude: (file: string) => exclude.globs.some((glob) => matchesGlob(relative(exclude.base, file).split(sep).join('/'), glob)) } : {}),
      sink,
    });
  }
  const result = withTemplates(checker.finish(loaded.problems), rendered);
  for (const problem of result.problems) io.stderr(`${formatProblem(problem)}\n`);
  for (const note of result.notes) io.stderr(`${noteLine(note)}\n`);
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
  const skippedFiles: SkippedFile[] = [
    ...(loaded.notManifests ?? []).map((file) => ({ file, reason: 'holds no Kubernetes object' })),
    ...(loaded.notRead ?? []).map((file) => ({ file, reason: NOT_READ })),
    ...(loaded.excluded ?? []).map((file) => ({ file, reason: 'excluded by the configuration' })),
  ];
  if (flags.writeBaseline !== undefined) {
    // Every finding of this run is accepted, those the old baseline held included.
    const accepted = [...result.findings, ...result.suppressed.filter((f) => f.suppression?.kind === 'external')];
    await writeBaselineFile(flags.writeBaseline, accepted);
    io.stderr(`probelet: wrote ${accepted.length} finding${accepted.length === 1 ? '' : 's'} to the baseline ${flags.writeBaseline}\n`);
  }
  if (flags.output === 'text') {
    // "0 errors, 0 warnings, 0 info" over nothing checked reads as a pass: stderr says what happened.
    if (result.checked > 0) io.stdout(toText(result, flags.showSuppressed === true));
    if (live !== undefined && live.length > 0) io.stdout(liveText(live));
    const note = skippedNote(loaded.skipped);
    if (note !== '') io.stdout(`${note}\n`);
  } else if (flags.output === 'json' && live !== undefined) io.stdout(withLive(toJson({ ...result, skipped: loaded.skipped, skippedFiles }), live));
  else if (flags.output === 'sarif' && live !== undefined) {
    // Loaded with the API client, for --cluster only.
    const { withLiveSarif } = await import('../../explain/live-sarif.js');
    io.stdout(withLiveSarif(toSarif(result, ruleInfos, packageVersion()), live));
  } else writeDocument(flags.output, { ...result, skipped: loaded.skipped, skippedFiles }, io);
  const folderNote = notManifestsNote(loaded.notManifests);
  if (folderNote !== '') io.stderr(`probelet: ${folderNote}\n`);
  if (workloads === 0 && result.problems.length === 0 && flags.cluster === true) {
    io.stderr(`probelet: no workload in ${flags.allNamespaces === true ? 'any namespace' : `namespace ${flags.namespace ?? '(the context\'s)'}`}${flags.selector !== undefined ? ` with labels ${flags.selector}` : ''}\n`);
    return EXIT_OK;
  }
  // On stderr, only what may have been meant as a manifest (`deploy.yaml.golden`, excluded
  // files); a README is listed in -o json's skipped only.
  const notRead = skippedFiles.filter((f) => f.reason !== 'holds no Kubernetes object' && (f.reason !== NOT_READ || MANIFEST_LIKE.test(f.file)));
  if (notRead.length > 0) io.stderr(`probelet: ${filesNote(notRead)}\n`);
  if (result.checked === 0 && result.problems.length === 0) {
    // A green check of nothing would pass a CI job that points at the wrong file.
    const passed = loaded.skipped.length > 0 ? ` (${skippedNote(loaded.skipped)})` : '';
    const what = rendered ? [`what ${rendered.source} rendered`] : paths;
    io.stderr(`probelet: no workload was checked: ${what.join(', ')} hold${what.length === 1 ? 's' : ''} no Pod, workload or PodTemplate${passed}\n`);
    return EXIT_USAGE;
  }
  // Input problems exit 2 whatever --fail-on says: part of the input was not checked.
  if (result.problems.length > 0) {
    const rest = result.checked > 0 ? `; the other ${result.checked} object${result.checked === 1 ? ' was' : 's were'} checked` : '; nothing else was checked';
    io.stderr(`probelet: ${result.problems.length} problem${result.problems.length === 1 ? '' : 's'} in the input (above)${rest}\n`);
    return EXIT_USAGE;
  }
  if (flags.writeBaseline !== undefined || settings.failOn === 'never') return EXIT_OK;
  const threshold = RANK[settings.failOn];
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

/** Rendered input: each finding and problem names the template its object came from. */
function withTemplates(result: CheckResult, rendered: Rendered | undefined): CheckResult {
  if (!rendered) return result;
  const mark = (f: Finding): Finding => {
    const template = f.file === rendered.source ? rendered.templateAt(f.line) : undefined;
    return template === undefined ? f : { ...f, template };
  };
  return {
    ...result,
    findings: result.findings.map(mark),
    suppressed: result.suppressed.map(mark),
    notes: result.notes.map((n) => {
      const template = n.file === rendered.source ? rendered.templateAt(n.line) : undefined;
      return template === undefined ? n : { ...n, template };
    }),
    problems: result.problems.map((p) => {
      const template = p.source === rendered.source && p.line !== undefined ? rendered.templateAt(p.line) : undefined;
      return template === undefined ? p : { ...p, message: `${p.message} (from ${template})` };
    }),
  };
}

function writeDocument(output: 'json' | 'sarif', result: CheckOutput, io: CliIO): void {
  io.stdout(output === 'json' ? toJson(result) : toSarif(result, ruleInfos, packageVersion()));
}

/** `skipped 2 files in the folders: a.txt (not *.yaml…), …`, at most 10 named. */
function filesNote(files: readonly SkippedFile[]): string {
  const named = files.slice(0, 10).map((f) => `${f.file} (${f.reason})`).join(', ');
  const more = files.length > 10 ? `, and ${files.length - 10} more (-o json lists them all)` : '';
  return `skipped ${files.length} file${files.length === 1 ? '' : 's'} in the folders: ${named}${more}`;
}

async function readBaseline(path: string): Promise<Set<string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliUsageError(`--baseline ${path}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory (write one with --write-baseline)' : String(err)}`);
  }
  try {
    return parseBaseline(text);
  } catch (err) {
    throw new CliUsageError(`--baseline ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function writeBaselineFile(path: string, findings: readonly Finding[]): Promise<void> {
  try {
    await writeFile(path, baselineText(findings));
  } catch (err) {
    throw new CliUsageError(`--write-baseline ${path}: cannot write: ${err instanceof Error ? err.message : String(err)}`);
  }
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
    if (id === VALIDATION_RULE_ID) throw new CliUsageError(`--disable: ${id} cannot be turned off: an object the API server would refuse is an input problem (exit 2) for every command`);
  }
  return ids;
}

function parseStartupTimes(values: readonly string[], flag: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const value of values) {
    const eq = value.indexOf('=');
    const container = value.slice(0, eq).trim();
    if (eq <= 0 || !wellFormedKey(container)) throw new CliUsageError(`${flag}: expected [POD/]CONTAINER=DURATION (e.g. web=40s or web-0/app=40s), got ${JSON.stringify(value)}`);
    setOnce(times, container, parseDuration(value.slice(eq + 1), flag) / 1000, flag);
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
function parseProbeP99(values: readonly string[], flag: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const value of values) {
    const eq = value.indexOf('=');
    const key = value.slice(0, eq).trim();
    const dot = key.lastIndexOf('.');
    if (eq <= 0 || dot <= 0 || !PROBE_KINDS.includes(key.slice(dot + 1)) || !wellFormedKey(key.slice(0, dot))) {
      throw new CliUsageError(`${flag}: expected [POD/]CONTAINER.PROBE=DURATION with PROBE one of ${PROBE_KINDS.join(', ')} (e.g. web.liveness=0.9s), got ${JSON.stringify(value)}`);
    }
    setOnce(times, key, parseDuration(value.slice(eq + 1), flag) / 1000, flag);
  }
  return times;
}

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../../package.json') as { version: string }).version;
}
