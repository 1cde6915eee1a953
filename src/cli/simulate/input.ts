/**
 * `probelet simulate`'s behaviour input: `-b CONTAINER[.PROBE]=SCRIPT` flags and
 * `-b FILE` YAML files (the same keys, or per container `script`, `liveness`,
 * `readiness`, `startup`, `sigterm: ignore`), checked against the pods' containers. Every
 * problem is a usage error naming the flag and the fix (exit 2).
 */
import { readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import type { Pod } from '../../api/types.js';
import type { ProbeType } from '../../prober/types.js';
import { IGNORE_SIGTERM, PROBE_KINDS, type Behaviours, type ContainerBehaviour } from '../../simulate/behaviour.js';
import { parseScript, ScriptError, withFirstPhase, type Script } from '../../simulate/script.js';
import { formatGoDuration, parseDurationMs } from '../../util/duration.js';
import { CliUsageError } from '../io.js';

/** One `CONTAINER[.PROBE]=SCRIPT` assignment and where it came from (for messages). */
interface Assignment {
  key: string;
  script: string;
  where: string;
}

/** The behaviours of behaviour files then `-b` scripts (scripts win), checked against `pods`. */
export async function readBehaviours(flags: readonly string[], files: readonly string[], pods: readonly Pod[]): Promise<Map<string, ContainerBehaviour>> {
  const assignments: Assignment[] = [];
  /** Containers whose file says `sigterm: ignore`, and that file (for messages). */
  const ignoreSigterm = new Map<string, string>();
  for (const file of files) assignments.push(...(await readBehaviourFile(file, ignoreSigterm)));
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new CliUsageError(`-b ${flag}: expected CONTAINER[.PROBE]=SCRIPT, e.g. -b app=down:30s,up or -b app.readiness=up:1m,fail`);
    assignments.push({ key: flag.slice(0, eq), script: flag.slice(eq + 1), where: `-b ${flag}` });
  }
  const names = containerNames(pods);
  const behaviours = new Map<string, ContainerBehaviour>();
  for (const { key, script, where } of assignments) {
    const [name = '', probe, ...extra] = key.split('.');
    if (!names.includes(name)) {
      throw new CliUsageError(`${where}: no container ${JSON.stringify(name)} in ${podList(pods)} (containers: ${names.join(', ')})`);
    }
    if (extra.length > 0 || (probe !== undefined && !PROBE_KINDS.includes(probe as ProbeType))) {
      throw new CliUsageError(`${where}: unknown probe ${JSON.stringify(key.slice(name.length + 1))}: write ${name}.liveness, ${name}.readiness or ${name}.startup`);
    }
    let parsed: Script;
    try {
      parsed = parseScript(script);
    } catch (err) {
      if (err instanceof ScriptError) throw new CliUsageError(`${where}: ${err.message}`);
      throw err;
    }
    if (probe !== undefined && parsed.some((p) => p.state.kind === 'exit')) {
      throw new CliUsageError(`${where}: exit(N) ends the container, not a probe: put it in the container's script (-b ${name}=…)`);
    }
    const b = behaviours.get(name) ?? { probes: {} };
    if (probe === undefined) b.script = parsed;
    else b.probes[probe as ProbeType] = parsed;
    behaviours.set(name, b);
  }
  for (const [name, file] of ignoreSigterm) {
    if (!names.includes(name)) throw new CliUsageError(`--behaviour ${file}: no container ${JSON.stringify(name)} in ${podList(pods)} (containers: ${names.join(', ')})`);
    const b = behaviours.get(name) ?? { probes: {} };
    b.onSigterm = IGNORE_SIGTERM;
    behaviours.set(name, b);
  }
  return behaviours;
}

async function readBehaviourFile(file: string, ignoreSigterm: Map<string, string>): Promise<Assignment[]> {
  const where = `--behaviour ${file}`;
  let doc: unknown;
  try {
    doc = yaml.load(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliUsageError(`${where}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (doc === null || doc === undefined) return [];
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new CliUsageError(`${where}: expected a mapping of CONTAINER[.PROBE]: SCRIPT, e.g. "app: down:30s,up"`);
  }
  const out: Assignment[] = [];
  for (const [key, value] of Object.entries(doc)) {
    if (typeof value === 'string') {
      out.push({ key, script: value, where: `${where}: ${key}` });
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new CliUsageError(`${where}: ${key}: expected a script ("down:30s,up") or a mapping with script, liveness, readiness, startup, sigterm`);
    }
    for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
      if (field === 'sigterm') {
        if (v !== 'ignore' && v !== 'honour' && v !== 'honor') throw new CliUsageError(`${where}: ${key}.sigterm: expected "ignore" or "honour", got ${JSON.stringify(v)}`);
        if (v === 'ignore') ignoreSigterm.set(key, file);
        continue;
      }
      if (field !== 'script' && !PROBE_KINDS.includes(field as ProbeType)) {
        throw new CliUsageError(`${where}: ${key}.${field}: unknown field (fields: script, liveness, readiness, startup, sigterm)`);
      }
      if (typeof v !== 'string') throw new CliUsageError(`${where}: ${key}.${field}: expected a script such as "down:30s,up"`);
      out.push({ key: field === 'script' ? key : `${key}.${field}`, script: v, where: `${where}: ${key}.${field}` });
    }
  }
  return out;
}

/** `--sweep CONTAINER=FROM..TO/STEP`: the container and the first-phase lengths to try (ms). */
export interface SweepPlan {
  container: string;
  valuesMs: number[];
}

const MAX_SWEEP_VALUES = 1000;

/**
 * `CONTAINER=FROM..TO/STEP` cut at the first `=`, the first `..` after it and the first `/`
 * after that, each part non-empty. By position: the pattern it replaces backtracked
 * polynomially on a long run of dots.
 */
function sweepParts(text: string): [string, string, string, string] | undefined {
  const eq = text.indexOf('=');
  const dots = eq < 1 ? -1 : text.indexOf('..', eq + 2);
  const slash = dots === -1 ? -1 : text.indexOf('/', dots + 3);
  if (slash === -1 || slash === text.length - 1 || text.slice(dots + 2, slash).includes('/')) return undefined;
  return [text.slice(0, eq), text.slice(eq + 1, dots), text.slice(dots + 2, slash), text.slice(slash + 1)];
}

export function parseSweep(text: string, behaviours: Map<string, ContainerBehaviour>, pods: readonly Pod[]): SweepPlan {
  const fix = 'write --sweep CONTAINER=FROM..TO/STEP, e.g. --sweep app=10s..120s/10s';
  const parts = sweepParts(text.trim());
  if (!parts) throw new CliUsageError(`--sweep ${text}: ${fix}`);
  const [container, fromText, toText, stepText] = parts;
  const from = parseDurationMs(fromText);
  const to = parseDurationMs(toText);
  const step = parseDurationMs(stepText);
  if (from === undefined || to === undefined || step === undefined || step <= 0 || to < from) {
    throw new CliUsageError(`--sweep ${text}: FROM, TO and STEP must be durations (30s, 2m) with FROM ≤ TO and STEP > 0; ${fix}`);
  }
  const names = containerNames(pods);
  if (!names.includes(container)) throw new CliUsageError(`--sweep ${text}: no container ${JSON.stringify(container)} in ${podList(pods)} (containers: ${names.join(', ')})`);
  const script = behaviours.get(container)?.script;
  if (!script || script.length < 2) {
    throw new CliUsageError(`--sweep ${text}: the sweep varies the first phase of ${container}'s script, which needs at least two phases: add e.g. -b ${container}=down:30s,up`);
  }
  const count = Math.floor((to - from) / step) + 1;
  if (count > MAX_SWEEP_VALUES) {
    const wider = formatGoDuration(Math.ceil((to - from) / (MAX_SWEEP_VALUES - 1) / 1000) * 1000);
    throw new CliUsageError(`--sweep ${text}: ${count} values to try, at most ${MAX_SWEEP_VALUES}: use a larger STEP (e.g. /${wider}) or a shorter range`);
  }
  const valuesMs: number[] = [];
  for (let i = 0; i < count; i++) valuesMs.push(from + i * step);
  return { container, valuesMs };
}

/** The behaviours with `container`'s first phase lasting `ms`. */
export function sweptBehaviours(behaviours: Map<string, ContainerBehaviour>, container: string, ms: number): Map<string, ContainerBehaviour> {
  const copy = new Map(behaviours);
  const b = behaviours.get(container);
  if (b?.script) copy.set(container, { ...b, script: withFirstPhase(b.script, ms) });
  return copy;
}

function containerNames(pods: readonly Pod[]): string[] {
  const names = new Set<string>();
  for (const pod of pods) for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) names.add(c.name);
  return [...names];
}

function podList(pods: readonly Pod[]): string {
  const names = pods.map((p) => p.metadata?.name ?? '');
  return names.length === 1 ? `pod ${names[0] ?? ''}` : `pods ${names.join(', ')}`;
}

export type { Behaviours };
