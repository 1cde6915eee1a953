/**
 * Behaviour scripts: what a simulated container does over its life, as a comma-separated
 * list of phases `STATE[:DURATION]` (`down:35s,up`, `up:1h,hang`, `up:30s,exit(1)`). The
 * last phase lasts for ever; every new instance of the container plays the script from
 * its start, as a restarted process would.
 */
import { formatGoDuration, parseDurationMs } from '../util/duration.js';

/** How a container answers its probes during a phase (see README, `probelet simulate`). */
export type PhaseState =
  | { kind: 'down' }
  | { kind: 'up' }
  /** Answers, but unhealthy: HTTP `code` (500 unless `fail(N)` says), gRPC NOT_SERVING, exec exit 1. */
  | { kind: 'fail'; code?: number }
  | { kind: 'hang' }
  | { kind: 'slow'; delayMs: number }
  /** Answers HTTP with a 302 to another host, which the kubelet does not follow (a ProbeWarning). */
  | { kind: 'redirect'; location: string }
  | { kind: 'exit'; code: number };

export interface Phase {
  state: PhaseState;
  /** Length of the phase; `Infinity` for the last one (and for an `exit`, which ends the instance). */
  durationMs: number;
}

export type Script = readonly Phase[];

/** The script of a container with none: healthy from the start. */
export const UP_SCRIPT: Script = [{ state: { kind: 'up' }, durationMs: Infinity }];

export const STATE_NAMES = 'down, up, fail, fail(HTTP status), hang, slow(D), redirect(URL), exit(N)';

/** A script that cannot be read; the message says what is wrong, the caller adds where. */
export class ScriptError extends Error {
  override name = 'ScriptError';
}

/** Parses `STATE[:DURATION],…`; throws a ScriptError naming the bad phase and the fix. */
export function parseScript(text: string): Script {
  const parts = text.split(',').map((p) => p.trim());
  if (text.trim() === '' || parts.some((p) => p === '')) {
    throw new ScriptError(`empty phase in ${JSON.stringify(text)}: write STATE[:DURATION] phases separated by commas, e.g. down:30s,up`);
  }
  const phases: Phase[] = [];
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    const colon = part.lastIndexOf(':');
    const stateText = colon < 0 || part.endsWith(')') ? part : part.slice(0, colon);
    const durationText = stateText === part ? undefined : part.slice(colon + 1);
    const state = parseState(stateText);
    let durationMs = Infinity;
    if (durationText !== undefined) {
      const ms = parseDurationMs(durationText);
      if (ms === undefined || ms <= 0) {
        throw new ScriptError(`bad duration ${JSON.stringify(durationText)} in phase ${JSON.stringify(part)}: use a positive duration such as 30s, 1m30s or 500ms`);
      }
      durationMs = ms;
    } else if (!last && state.kind !== 'exit') {
      throw new ScriptError(`phase ${JSON.stringify(part)} needs a duration (only the last phase lasts for ever): e.g. ${stateText}:30s`);
    }
    if (state.kind === 'exit') {
      if (durationText !== undefined) throw new ScriptError(`${stateText} ends the container: it takes no duration (write ${stateText}, not ${part})`);
      if (!last) throw new ScriptError(`${stateText} ends the container, so it must be the last phase: drop what follows it`);
    }
    phases.push({ state, durationMs: last ? Infinity : durationMs });
  });
  return phases;
}

function parseState(text: string): PhaseState {
  switch (text) {
    case 'down':
    case 'up':
    case 'fail':
    case 'hang':
      return { kind: text };
  }
  const slow = /^slow\((.*)\)$/.exec(text);
  if (slow) {
    const ms = parseDurationMs(slow[1] ?? '');
    if (ms === undefined) throw new ScriptError(`bad duration in ${JSON.stringify(text)}: write slow(D) with D such as 2s or 500ms`);
    return { kind: 'slow', delayMs: ms };
  }
  const fail = /^fail\((.*)\)$/.exec(text);
  if (fail) {
    const code = Number(fail[1]);
    if (!/^\d{3}$/.test(fail[1] ?? '') || code < 400 || code > 599) {
      throw new ScriptError(`bad status in ${JSON.stringify(text)}: write fail(N) with the HTTP status N from 400 to 599 an HTTP probe gets (fail alone: 500)`);
    }
    return { kind: 'fail', code };
  }
  const redirect = /^redirect\((.*)\)$/.exec(text);
  if (redirect) {
    const location = redirect[1] ?? '';
    if (!/^https?:\/\/[^/\s]+/.test(location)) {
      throw new ScriptError(`bad URL in ${JSON.stringify(text)}: write redirect(URL) with an absolute http(s) URL of another host, e.g. redirect(http://login.example/)`);
    }
    return { kind: 'redirect', location };
  }
  const exit = /^exit\((.*)\)$/.exec(text);
  if (exit) {
    const code = Number(exit[1]);
    if (!/^\d{1,3}$/.test(exit[1] ?? '') || code > 255) {
      throw new ScriptError(`bad exit code in ${JSON.stringify(text)}: write exit(N) with N from 0 to 255`);
    }
    return { kind: 'exit', code };
  }
  throw new ScriptError(`unknown state ${JSON.stringify(text)}: the states are ${STATE_NAMES}`);
}

/** The phase in force `elapsedMs` after the instance started, and when it began. */
export function phaseAt(script: Script, elapsedMs: number): { phase: Phase; startMs: number } {
  let startMs = 0;
  for (const phase of script) {
    if (elapsedMs < startMs + phase.durationMs) return { phase, startMs };
    startMs += phase.durationMs;
  }
  // Unreachable for a parsed script (its last phase lasts for ever).
  const last = script[script.length - 1] ?? UP_SCRIPT[0];
  return { phase: last as Phase, startMs };
}

/** When (ms after start) an instance playing `script` exits, and with which code; undefined: never. */
export function exitOf(script: Script): { atMs: number; code: number } | undefined {
  let atMs = 0;
  for (const phase of script) {
    if (phase.state.kind === 'exit') return { atMs, code: phase.state.code };
    atMs += phase.durationMs;
  }
  return undefined;
}

/** `down:35s,up` — the canonical text of a script. */
export function formatScript(script: Script): string {
  return script
    .map((p) => {
      const state =
        p.state.kind === 'slow'
          ? `slow(${formatGoDuration(p.state.delayMs)})`
          : p.state.kind === 'fail' && p.state.code !== undefined
            ? `fail(${p.state.code})`
            : p.state.kind === 'exit'
            ? `exit(${p.state.code})`
            : p.state.kind === 'redirect'
              ? `redirect(${p.state.location})`
              : p.state.kind;
      return Number.isFinite(p.durationMs) ? `${state}:${formatGoDuration(p.durationMs)}` : state;
    })
    .join(',');
}

/** The script with its first phase lasting `durationMs` (for `--sweep`). */
export function withFirstPhase(script: Script, durationMs: number): Script {
  const [first, ...rest] = script;
  if (!first) return script;
  return [{ ...first, durationMs: rest.length === 0 ? Infinity : durationMs }, ...rest];
}

/** The time from start until the script first answers healthy within `timeoutMs` (undefined: never). */
export function firstHealthyMs(script: Script, timeoutMs: number): number | undefined {
  let atMs = 0;
  for (const phase of script) {
    const s = phase.state;
    if (s.kind === 'up' || (s.kind === 'slow' && s.delayMs < timeoutMs)) return atMs;
    if (s.kind === 'exit') return undefined;
    atMs += phase.durationMs;
  }
  return undefined;
}
