/**
 * `.probelet.yaml`: what a team sets once for `probelet check` instead of on every command
 * line — rules on or off and their severity, paths to leave out, start-up times and probe
 * p99s, fail-on. Found upward from the working directory (as .gitignore-style files are),
 * or named with `--config`. Read strictly, as manifests are: an unknown key is an error
 * naming its line and the nearest known key.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { decodeChunk, positionIndex } from '../../api/yaml.js';
import { nearestName } from '../../api/strict-fields.js';
import { isRecord } from '../../api/workloads.js';
import { describe } from '../../api/shape.js';
import type { Severity } from '../../check/types.js';
import { CliUsageError } from '../io.js';

export const CONFIG_FILE = '.probelet.yaml';

/** What a rule is set to in `rules:`. */
export type RuleSetting = 'off' | 'on' | Severity;
const RULE_SETTINGS: readonly RuleSetting[] = ['off', 'on', 'error', 'warning', 'info'];
const FAIL_ON = ['error', 'warning', 'info', 'never'] as const;

export interface CheckConfig {
  /** The file read. */
  path: string;
  rules: ReadonlyMap<string, RuleSetting>;
  /** Globs relative to the config file's folder; files found in folders that match are not read. */
  exclude: readonly string[];
  /** `[POD/]CONTAINER=DURATION`, as `--startup-time` takes them. */
  startupTime: readonly string[];
  /** `[POD/]CONTAINER.PROBE=DURATION`, as `--probe-p99` takes them. */
  probeP99: readonly string[];
  failOn?: (typeof FAIL_ON)[number];
}

const KEYS = ['rules', 'exclude', 'startup-time', 'probe-p99', 'fail-on'] as const;

/** The nearest `.probelet.yaml` from `cwd` up to the root, if any. */
export async function findConfig(cwd: string): Promise<string | undefined> {
  let dir = resolve(cwd);
  for (;;) {
    const path = join(dir, CONFIG_FILE);
    try {
      await readFile(path);
      return path;
    } catch {
      // Not here: one folder up.
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Reads and validates a config file; every problem at once, as a CliUsageError (exit 2). */
export async function loadConfig(path: string, isRule: (id: string) => boolean, ruleIds: readonly string[]): Promise<CheckConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliUsageError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : String(err)}`);
  }
  const chunk = { text, lineOffset: 0 };
  const decoded = decodeChunk(chunk);
  if (decoded.error) throw new CliUsageError(`${path}${decoded.error.line !== undefined ? `:${decoded.error.line}` : ''}: ${decoded.error.message}`);
  const value = decoded.value ?? {};
  const where = positionIndex(chunk);
  const errors: string[] = [];
  const fail = (at: (string | number)[], message: string): void => {
    errors.push(`${path}:${where(at).line}: ${at.join('.') || '(top)'}: ${message}`);
  };
  const config: { -readonly [K in keyof CheckConfig]: CheckConfig[K] } = { path, rules: new Map(), exclude: [], startupTime: [], probeP99: [] };
  if (!isRecord(value)) {
    fail([], `expected a mapping of ${KEYS.join(', ')}, got ${describe(value)}`);
  } else {
    for (const [key, item] of Object.entries(value)) {
      if (!(KEYS as readonly string[]).includes(key)) {
        fail([key], unknown('key', key, KEYS));
        continue;
      }
      if (item === null || item === undefined) continue;
      if (key === 'rules') config.rules = ruleSettings(item, isRule, ruleIds, fail);
      else if (key === 'exclude') config.exclude = stringList(item, [key], fail);
      else if (key === 'startup-time' || key === 'probe-p99') {
        const pairs = stringMap(item, [key], fail);
        if (key === 'startup-time') config.startupTime = pairs;
        else config.probeP99 = pairs;
      } else if (key === 'fail-on') {
        if (typeof item === 'string' && (FAIL_ON as readonly string[]).includes(item)) config.failOn = item as (typeof FAIL_ON)[number];
        else fail([key], `expected one of ${FAIL_ON.join(', ')}, got ${describe(item)}`);
      }
    }
  }
  if (errors.length > 0) throw new CliUsageError(`${errors.join('\nprobelet: ')}\nprobelet: fix the configuration above (docs/check.md#configuration)`);
  return config;
}

function unknown(what: string, name: string, known: readonly string[]): string {
  const near = nearestName(name, known);
  return `unknown ${what} ${JSON.stringify(name)}${near !== undefined ? `: did you mean ${JSON.stringify(near)}?` : ''} (known: ${known.join(', ')})`;
}

function ruleSettings(item: unknown, isRule: (id: string) => boolean, ruleIds: readonly string[], fail: (at: (string | number)[], message: string) => void): Map<string, RuleSetting> {
  const out = new Map<string, RuleSetting>();
  if (!isRecord(item)) {
    fail(['rules'], `expected a mapping of rule ids to ${RULE_SETTINGS.join(', ')}, got ${describe(item)}`);
    return out;
  }
  for (const [id, setting] of Object.entries(item)) {
    // YAML 1.1 reads a bare `off` / `on` as a boolean: take it as the word it was.
    const word = setting === false ? 'off' : setting === true ? 'on' : setting;
    if (!isRule(id)) fail(['rules', id], withoutKnownList(unknown('rule', id, ruleIds)) + ' (probelet check --rules lists them)');
    else if (id === 'invalid') fail(['rules', id], 'an object the API server refuses is an input problem, not a rule that can be set');
    else if (typeof word !== 'string' || !(RULE_SETTINGS as readonly string[]).includes(word)) fail(['rules', id], `expected one of ${RULE_SETTINGS.join(', ')}, got ${describe(setting)}`);
    else out.set(id, word as RuleSetting);
  }
  return out;
}

function stringList(item: unknown, at: string[], fail: (at: (string | number)[], message: string) => void): string[] {
  if (!Array.isArray(item) || !item.every((s) => typeof s === 'string')) {
    fail(at, `expected a list of strings, got ${describe(item)}`);
    return [];
  }
  return item as string[];
}

/** `{web: 40s}` → `['web=40s']`, the flags' form, so the flags' parsers read them. */
function stringMap(item: unknown, at: string[], fail: (at: (string | number)[], message: string) => void): string[] {
  if (!isRecord(item)) {
    fail(at, `expected a mapping of [POD/]CONTAINER to a duration, got ${describe(item)}`);
    return [];
  }
  const out: string[] = [];
  for (const [key, value] of Object.entries(item)) {
    if (typeof value === 'string' || typeof value === 'number') out.push(`${key}=${value}`);
    else fail([...at, key], `expected a duration (e.g. 40s), got ${describe(value)}`);
  }
  return out;
}

/** `… (known: a, b, …)` without its list: the rules are too many to print (no regex: linear on any text). */
function withoutKnownList(message: string): string {
  const at = message.lastIndexOf(' (known: ');
  return at >= 0 && message.endsWith(')') ? message.slice(0, at) : message;
}
