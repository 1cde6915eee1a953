/**
 * The fleet file of `probelet node --runtime simulated --fleet fleet.yaml`: node pools (how
 * many nodes, their labels, taints and allocatable pods) and behaviours by selector (which
 * containers play which script of the `probelet simulate` language), so that manifests
 * deploy unchanged. Read strictly, as manifests and `.probelet.yaml` are: every problem at
 * once, each naming file:line, the field and the fix; an unknown key is an error with the
 * nearest known one.
 */
import { readFileSync } from 'node:fs';
import type { Taint } from 'kubernetes-types/core/v1.js';
import { isDNS1123Label } from '../../api/formats.js';
import { describe, formatFieldPath } from '../../api/shape.js';
import { nearestName } from '../../api/strict-fields.js';
import { isRecord } from '../../api/workloads.js';
import { decodeChunk, positionIndex, type FieldPath } from '../../api/yaml.js';
import type { ProbeType } from '../../prober/types.js';
import { PROBE_KINDS } from '../../simulate/behaviour.js';
import { parseScript, type Script } from '../../simulate/script.js';
import { DEFAULT_MAX_PODS } from '../node-object.js';
import { globError } from './glob.js';

export const FLEET_API_VERSION = 'probelet.dev/v1alpha1';
export const FLEET_KIND = 'Fleet';

/** Nodes one process registers at most, as `--nodes` allows (a whole fleet, before `--shard`). */
export const MAX_FLEET_NODES = 10_000;

/** Pods one node may be given at most (`pods:`); the kubelet's own `maxPods` has no limit, a simulated node's memory has. */
const MAX_PODS_PER_NODE = 10_000;

/** The taint of simulated nodes (as kwok taints its own): only pods that tolerate it land there. */
export const SIMULATED_TAINT: Taint = { key: 'probelet.dev/simulated', value: 'true', effect: 'NoSchedule' };

export interface FleetPool {
  name: string;
  count: number;
  labels: Record<string, string>;
  /** Default (no `taints:` key): {@link SIMULATED_TAINT}; `taints: []` for none. */
  taints: Taint[];
  /** Allocatable pods of each node (default the kubelet's 110). */
  pods: number;
}

/** Which containers a behaviour is for: every key given must match; a string is a glob (`*`, `?`). */
export interface FleetMatch {
  namespace?: string;
  labels?: Record<string, string>;
  container?: string;
  image?: string;
}

export interface FleetBehaviour {
  match: FleetMatch;
  /** What the container plays (its exits, and probes without one of their own). */
  script: Script;
  /** Scripts of one probe kind only (`probes: {readiness: down:30s,up}`). */
  probes: Partial<Record<ProbeType, Script>>;
}

export interface Fleet {
  path: string;
  pools: FleetPool[];
  /** First match wins. */
  behaviours: FleetBehaviour[];
}

/** One node of a fleet: `<pool>-<i>`. */
export interface FleetNode {
  name: string;
  pool: FleetPool;
}

/** A fleet file that cannot be used; `problems` are whole lines (`fleet.yaml:7: pools[0].count: …`). */
export class FleetError extends Error {
  override name = 'FleetError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

const TOP_KEYS = ['apiVersion', 'kind', 'pools', 'behaviours'] as const;
const POOL_KEYS = ['name', 'count', 'labels', 'taints', 'pods'] as const;
const TAINT_KEYS = ['key', 'value', 'effect'] as const;
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
const BEHAVIOUR_KEYS = ['match', 'script', 'probes'] as const;
const MATCH_KEYS = ['namespace', 'labels', 'container', 'image'] as const;

/** Reads and validates a fleet file; throws a FleetError listing every problem. */
export function loadFleet(path: string): Fleet {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new FleetError([`${path}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : String(err)}`]);
  }
  return parseFleet(text, path);
}

/** Validates the text of a fleet file (`path` names it in messages). */
export function parseFleet(text: string, path: string): Fleet {
  const chunk = { text, lineOffset: 0 };
  const decoded = decodeChunk(chunk);
  if (decoded.error) throw new FleetError([`${path}${decoded.error.line !== undefined ? `:${decoded.error.line}` : ''}: ${decoded.error.message}`]);
  const where = positionIndex(chunk);
  const problems: string[] = [];
  const fail = (at: FieldPath, message: string): void => {
    problems.push(`${path}:${where(at).line}: ${formatFieldPath(at) || '(top)'}: ${message}`);
  };
  const fleet: Fleet = { path, pools: [], behaviours: [] };
  const value = decoded.value;
  if (!isRecord(value)) {
    fail([], `expected a mapping with apiVersion: ${FLEET_API_VERSION}, kind: ${FLEET_KIND}, pools and behaviours; got ${describe(value)}`);
    throw new FleetError(problems);
  }
  strictKeys(value, [], TOP_KEYS, fail);
  if (value.apiVersion !== FLEET_API_VERSION) fail(['apiVersion'], `expected ${FLEET_API_VERSION}, got ${describe(value.apiVersion)}`);
  if (value.kind !== FLEET_KIND) fail(['kind'], `expected ${FLEET_KIND}, got ${describe(value.kind)}`);
  fleet.pools = pools(value.pools, fail);
  fleet.behaviours = behaviours(value.behaviours, fail);
  if (problems.length > 0) throw new FleetError(problems);
  return fleet;
}

/** Every node of the fleet in order: the pools in the file's order, `<pool>-0` … `<pool>-<count-1>`. */
export function fleetNodes(fleet: Fleet): FleetNode[] {
  return fleet.pools.flatMap((pool) => Array.from({ length: pool.count }, (_, i) => ({ name: `${pool.name}-${i}`, pool })));
}

type Fail = (at: FieldPath, message: string) => void;

function strictKeys(value: Record<string, unknown>, at: FieldPath, known: readonly string[], fail: Fail): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const near = nearestName(key, known);
    fail([...at, key], `unknown key${near !== undefined ? `: did you mean ${JSON.stringify(near)}?` : ''} (known: ${known.join(', ')})`);
  }
}

function pools(value: unknown, fail: Fail): FleetPool[] {
  if (!Array.isArray(value) || value.length === 0) {
    fail(['pools'], `expected a list of pools ({name, count, labels, taints, pods}), at least one; got ${describe(value)}`);
    return [];
  }
  const out: FleetPool[] = [];
  const seen = new Set<string>();
  let total = 0;
  value.forEach((item: unknown, i) => {
    const at = ['pools', i];
    if (!isRecord(item)) {
      fail(at, `expected a pool {name, count, labels, taints, pods}, got ${describe(item)}`);
      return;
    }
    strictKeys(item, at, POOL_KEYS, fail);
    const name = item.name;
    // `<name>-<i>` must be a Node name: a DNS label leaves room for the index.
    if (typeof name !== 'string' || isDNS1123Label(name).length > 0 || name.length > 50) {
      fail([...at, 'name'], `expected a pool name of lower-case letters, digits and '-', up to 50 characters (its nodes are <name>-0, <name>-1, …), got ${describe(name)}`);
    } else if (seen.has(name)) fail([...at, 'name'], `pool ${JSON.stringify(name)} is named twice: give each pool its own name (node names must be unique)`);
    else seen.add(name);
    const count = wholeNumber(item.count, [...at, 'count'], 1, MAX_FLEET_NODES, 'nodes in the pool', fail);
    total += count ?? 0;
    const pods = item.pods === undefined ? DEFAULT_MAX_PODS : wholeNumber(item.pods, [...at, 'pods'], 1, MAX_PODS_PER_NODE, "allocatable pods of each of the pool's nodes", fail);
    const labels = item.labels === undefined ? {} : labelMap(item.labels, [...at, 'labels'], fail);
    const taints = item.taints === undefined ? [SIMULATED_TAINT] : taintList(item.taints, [...at, 'taints'], fail);
    if (typeof name === 'string' && count !== undefined && pods !== undefined) out.push({ name, count, labels, taints, pods });
  });
  if (total > MAX_FLEET_NODES) fail(['pools'], `${total} nodes in all: a fleet has at most ${MAX_FLEET_NODES} (split it into several fleet files)`);
  return out;
}

function wholeNumber(value: unknown, at: FieldPath, min: number, max: number, what: string, fail: Fail): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  fail(at, `expected a whole number from ${min} to ${max} (${what}), got ${describe(value)}`);
  return undefined;
}

/** A label's name (optional DNS subdomain prefix and `/`) or value: the API server's rules, linear patterns. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function labelMap(value: unknown, at: FieldPath, fail: Fail): Record<string, string> {
  if (!isRecord(value)) {
    fail(at, `expected a mapping of label names to values, e.g. {zone: a}, got ${describe(value)}`);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    const slash = key.indexOf('/');
    const prefix = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    if ((prefix !== undefined && !LABEL_PREFIX.test(prefix)) || !LABEL_NAME.test(name)) {
      fail([...at, key], "not a label name: [prefix/]name, name up to 63 letters, digits, '-', '_', '.' starting and ending with a letter or digit");
      continue;
    }
    // YAML reads `a: 1` or `a: true` as a number or boolean; a label value is their text.
    const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
    if (text === undefined || (text !== '' && !LABEL_NAME.test(text))) {
      fail([...at, key], `expected a label value (up to 63 letters, digits, '-', '_', '.'; quote it), got ${describe(v)}`);
      continue;
    }
    out[key] = text;
  }
  return out;
}

function taintList(value: unknown, at: FieldPath, fail: Fail): Taint[] {
  if (!Array.isArray(value)) {
    fail(at, `expected a list of taints ({key, value, effect}; [] for none), got ${describe(value)}`);
    return [];
  }
  const out: Taint[] = [];
  value.forEach((item: unknown, i) => {
    const here = [...at, i];
    if (!isRecord(item)) {
      fail(here, `expected a taint {key, value, effect}, got ${describe(item)}`);
      return;
    }
    strictKeys(item, here, TAINT_KEYS, fail);
    const key = item.key;
    const effect = item.effect;
    const v = item.value === undefined ? undefined : typeof item.value === 'string' ? item.value : typeof item.value === 'number' || typeof item.value === 'boolean' ? String(item.value) : null;
    let ok = true;
    if (typeof key !== 'string' || labelMap({ [key]: '' }, here, () => undefined)[key] === undefined) {
      fail([...here, 'key'], `expected a taint key (a label name such as probelet.dev/simulated), got ${describe(key)}`);
      ok = false;
    }
    if (v === null || (v !== undefined && v !== '' && !LABEL_NAME.test(v))) {
      fail([...here, 'value'], `expected a taint value (a label value; quote it), got ${describe(item.value)}`);
      ok = false;
    }
    if (typeof effect !== 'string' || !(TAINT_EFFECTS as readonly string[]).includes(effect)) {
      fail([...here, 'effect'], `expected one of ${TAINT_EFFECTS.join(', ')}, got ${describe(effect)}`);
      ok = false;
    }
    if (ok) out.push({ key: key as string, ...(v ? { value: v } : {}), effect: effect as string });
  });
  return out;
}

function behaviours(value: unknown, fail: Fail): FleetBehaviour[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    fail(['behaviours'], `expected a list of behaviours ({match, script}; the first that matches a container wins), got ${describe(value)}`);
    return [];
  }
  const out: FleetBehaviour[] = [];
  value.forEach((item: unknown, i) => {
    const at = ['behaviours', i];
    if (!isRecord(item)) {
      fail(at, `expected a behaviour {match, script}, got ${describe(item)}`);
      return;
    }
    strictKeys(item, at, BEHAVIOUR_KEYS, fail);
    const match = matchOf(item.match, [...at, 'match'], fail);
    const script = scriptOf(item.script, [...at, 'script'], fail);
    const probes: Partial<Record<ProbeType, Script>> = {};
    if (item.probes !== undefined) {
      if (!isRecord(item.probes)) fail([...at, 'probes'], `expected a mapping of ${PROBE_KINDS.join(', ')} to scripts, got ${describe(item.probes)}`);
      else {
        strictKeys(item.probes, [...at, 'probes'], PROBE_KINDS, fail);
        for (const kind of PROBE_KINDS) {
          if (item.probes[kind] === undefined) continue;
          const s = scriptOf(item.probes[kind], [...at, 'probes', kind], fail);
          if (s) probes[kind] = s;
        }
      }
    }
    if (match && script) out.push({ match, script, probes });
  });
  return out;
}

function matchOf(value: unknown, at: FieldPath, fail: Fail): FleetMatch | undefined {
  if (value === undefined || value === null) {
    fail(at, 'expected a match {namespace, labels, container, image} ({} matches every container)');
    return undefined;
  }
  if (!isRecord(value)) {
    fail(at, `expected a mapping {namespace, labels, container, image} ({} matches every container), got ${describe(value)}`);
    return undefined;
  }
  strictKeys(value, at, MATCH_KEYS, fail);
  const match: FleetMatch = {};
  let ok = true;
  for (const key of ['namespace', 'container', 'image'] as const) {
    const v = value[key];
    if (v === undefined) continue;
    const error = typeof v === 'string' ? globError(v) : `expected a name or a glob, got ${describe(v)}`;
    if (error !== undefined) {
      fail([...at, key], error);
      ok = false;
    } else match[key] = v as string;
  }
  if (value.labels !== undefined) {
    let bad = false;
    const labels = labelMap(value.labels, [...at, 'labels'], (a, m) => {
      bad = true;
      fail(a, m);
    });
    if (bad) ok = false;
    else match.labels = labels;
  }
  return ok ? match : undefined;
}

function scriptOf(value: unknown, at: FieldPath, fail: Fail): Script | undefined {
  if (typeof value !== 'string') {
    fail(at, `expected a script of the simulate language (STATE[:DURATION],…, e.g. down:20s,up), got ${describe(value)}`);
    return undefined;
  }
  try {
    return parseScript(value);
  } catch (err) {
    fail(at, err instanceof Error ? err.message : String(err));
    return undefined;
  }
}
