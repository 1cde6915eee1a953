/**
 * `probelet explain`: why a pod was restarted or left service, from its status and events —
 * live (`pod/NAME`, `deploy/NAME` …, read-only through the API) or from saved
 * `kubectl get -o json` output (`-f pod.json --events events.json`). Thin: the diagnosis is
 * `explain/`, the reading `explain/source`.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import yaml from 'js-yaml';
import { setPodDefaults } from '../api/defaults.js';
import type { Pod } from '../api/types.js';
import { isRecord } from '../api/workloads.js';
import { explainPod, latestTimeMs, type PodExplanation } from '../explain/explain.js';
import { anyCause, toJson, toPatch, toText, type ExplainReport } from '../explain/output.js';
import { verifyDiagnosis } from '../explain/verify.js';
import type { LivePod, ReadClients } from '../explain/source.js';
import { SourceError, workloadKind } from '../explain/source-error.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { addExamples, outputOption } from './flags.js';
import { requireReadable } from './inputs.js';
import { CliUsageError, type CliIO } from './io.js';

const OUTPUTS = ['text', 'json', 'patch'] as const;

export interface ExplainFlags {
  output: (typeof OUTPUTS)[number];
  namespace?: string;
  kubeconfig?: string;
  filename?: string[];
  events: string[];
  /** `--verify`: simulate each fix (the spec as it is, and with the fix). */
  verify?: boolean;
  /** `--now`: when the saved output was read (RFC 3339); default the latest time in it. */
  now?: string;
}

export function registerExplainCommand(program: Command, io: CliIO, setExit: (code: number) => void, now: () => number = Date.now): void {
  const command = program
    .command('explain')
    .description("Say why a pod's containers were restarted or left service — one cause per container, with the evidence and the fix — from the cluster or from saved kubectl output.")
    .argument('[target]', 'pod/NAME, NAME (a pod), or deploy|sts|ds|rs|job/NAME (every pod of the workload)')
    .option('-n, --namespace <namespace>', "the target's namespace (default: the kubeconfig context's, else default)")
    .option('--kubeconfig <file>', 'kubeconfig to read the cluster with (default: $KUBECONFIG, else ~/.kube/config)')
    .addOption(new Option('-f, --filename <file>', 'saved `kubectl get pod -o json` output (a Pod or a List; repeatable): explain offline').argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]))
    .option('--events <file>', 'saved `kubectl get events -o json` output for -f (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--now <time>', 'with -f: when the output was saved, RFC 3339 (default: the latest time in it)')
    .option('--verify', 'simulate each fix on virtual time: the spec as it is must show the restarts, with the fix none')
    .addOption(outputOption(OUTPUTS, 'output format'))
    .action(async (target: string | undefined, flags: ExplainFlags) => {
      setExit(await runExplain(target, flags, io, now));
    });
  addExamples(command, [
    'probelet explain pod/api-7d9c-x2 -n shop',
    'probelet explain deploy/api -n shop -o patch',
    'probelet explain -f pod.json --events events.json',
  ]);
}

/** One `probelet explain`; returns the exit code: 0 nothing wrong, 1 a cause found, 2 bad input. */
export async function runExplain(target: string | undefined, flags: ExplainFlags, io: CliIO, now: () => number = Date.now): Promise<number> {
  let report: ExplainReport;
  try {
    report = flags.filename !== undefined && flags.filename.length > 0 ? await offline(target, flags) : await live(target, flags, now);
  } catch (err) {
    if (err instanceof SourceError) {
      io.stderr(`probelet: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
  if (flags.verify === true) await verifyReport(report);
  if (flags.output === 'json') io.stdout(toJson(report));
  else if (flags.output === 'patch') io.stdout(toPatch(report));
  else io.stdout(toText(report));
  return anyCause(report) ? EXIT_FAILED : EXIT_OK;
}

/** The pod each explanation was made from (for --verify), without putting it in the output. */
const podOf = new WeakMap<PodExplanation, Pod>();

function explained(pod: Pod, events: unknown, options: Parameters<typeof explainPod>[2]): PodExplanation {
  const x = explainPod(pod, events, options);
  podOf.set(x, pod);
  return x;
}

/** Attaches `verify` to every diagnosis with a cause: the fix simulated, or why it cannot be. */
async function verifyReport(report: ExplainReport): Promise<void> {
  for (const p of report.pods) {
    const pod = podOf.get(p);
    if (pod === undefined) continue;
    for (const d of p.diagnoses) {
      if (d.cause === 'none') continue;
      const v = await verifyDiagnosis(setPodDefaults(pod), d);
      d.verify = typeof v === 'string' ? { skipped: v } : v;
    }
  }
}

/** `kind/name` or `name` → the kind (Pod by default) and the name. */
function parseTarget(target: string): { kind: string; name: string } {
  const slash = target.indexOf('/');
  if (slash < 0) return { kind: 'Pod', name: target };
  const kind = workloadKind(target.slice(0, slash));
  const name = target.slice(slash + 1);
  if (kind === undefined || name === '' || name.includes('/')) {
    throw new CliUsageError(`explain: ${JSON.stringify(target)} is not KIND/NAME with KIND one of pod, deploy, sts, ds, rs, job (e.g. pod/api-7d9c-x2 or deploy/api)`);
  }
  return { kind, name };
}

async function live(target: string | undefined, flags: ExplainFlags, now: () => number): Promise<ExplainReport> {
  if (target === undefined) throw new CliUsageError('explain: give pod/NAME or a workload (deploy/NAME …), or -f POD.json --events EVENTS.json for saved output');
  if (flags.events.length > 0 || flags.now !== undefined) throw new CliUsageError(`explain: ${flags.now !== undefined ? '--now' : '--events'} goes with -f (saved output); on a cluster everything is read from the API`);
  const { kind, name } = parseTarget(target);
  // The API client is loaded only now: a command's start opens few files (see source-error.ts).
  const { readClients, readPod, readWorkloadPods } = await import('../explain/source.js');
  const clients = readClients(flags.kubeconfig);
  const namespace = flags.namespace ?? clients.namespace;
  const pods = kind === 'Pod' ? [await readPod(clients, namespace, name)] : await readWorkloadPods(clients, kind, namespace, name);
  if (pods.length === 0) throw new SourceError(`${target} in namespace ${namespace} has no pods (kubectl get ${target} -n ${namespace} -o wide)`);
  const readAt = now();
  return { target: kind === 'Pod' ? `pod/${name}` : target, pods: await Promise.all(pods.map((p) => explainLive(clients, p, readAt))) };
}

/** Explains a live pod; containers that exited by themselves get their previous run's last log lines. */
async function explainLive(clients: ReadClients, p: LivePod, nowMs: number): Promise<PodExplanation> {
  const first = explained(p.pod, p.events, { nowMs });
  const crashed = first.diagnoses.filter((d) => d.cause === 'app-crash').map((d) => d.container);
  if (crashed.length === 0) return first;
  const logs = new Map<string, string[]>();
  const { previousLogLines } = await import('../explain/source.js');
  for (const c of crashed) logs.set(c, await previousLogLines(clients, p.pod, c));
  return explained(p.pod, p.events, { nowMs, logs });
}

async function readJson(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8');
  try {
    return yaml.loadAll(text);
  } catch (err) {
    throw new SourceError(`${path}: not JSON or YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)} (save it with kubectl get … -o json > ${path})`);
  }
}

function podsIn(value: unknown): Pod[] {
  if (Array.isArray(value)) return value.flatMap(podsIn);
  if (!isRecord(value)) return [];
  if (value['kind'] === 'Pod') return [value as Pod];
  if (Array.isArray(value['items'])) return value['items'].flatMap(podsIn);
  return [];
}

function parseNow(text: string): number {
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) throw new CliUsageError(`--now ${JSON.stringify(text)}: expected an RFC 3339 time such as 2026-11-29T01:02:03Z`);
  return ms;
}

async function offline(target: string | undefined, flags: ExplainFlags): Promise<ExplainReport> {
  const files = [...(flags.filename ?? []), ...flags.events];
  await requireReadable(files);
  const podDocs = (await Promise.all((flags.filename ?? []).map(readJson))).flat();
  const eventDocs = (await Promise.all(flags.events.map(readJson))).flat();
  let pods = podsIn(podDocs);
  if (pods.length === 0) throw new SourceError(`${(flags.filename ?? []).join(', ')}: no Pod in it (save one with kubectl get pod NAME -o json > pod.json)`);
  if (target !== undefined) {
    const { kind, name } = parseTarget(target);
    if (kind !== 'Pod') throw new CliUsageError(`explain -f: give pod/NAME (or nothing, for every pod in the file); a ${kind}'s pods are found by its selector on a cluster only`);
    const found = pods.filter((p) => p.metadata?.name === name && (flags.namespace === undefined || (p.metadata?.namespace ?? 'default') === flags.namespace));
    if (found.length === 0) throw new SourceError(`no pod ${name} in ${(flags.filename ?? []).join(', ')}; pods there: ${pods.map((p) => p.metadata?.name ?? '?').join(', ')}`);
    pods = found;
  }
  // Events may come in the same file (kubectl get pod,events -o json).
  const events = [...eventDocs, ...podDocs];
  const nowMs = flags.now === undefined ? (latestTimeMs(pods, events) ?? 0) : parseNow(flags.now);
  return { target: pods.length === 1 ? `pod/${pods[0]?.metadata?.name ?? ''}` : (flags.filename ?? []).join(','), pods: pods.map((pod) => explained(pod, events, { nowMs })) };
}
