/**
 * Who plays which script: a container's own script (its answers to every probe, and when
 * it exits) and per-probe-kind overrides (`app.readiness=` — readiness that depends on a
 * database while liveness is fine). A container without any is `up` from the start.
 */
import type { ProbeType } from '../prober/types.js';
import { UP_SCRIPT, type Script } from './script.js';

export interface ContainerBehaviour {
  /** The container's script (undefined: none given, it is `up`). */
  script?: Script;
  /** Scripts for one probe kind only; the container's exit still follows `script`. */
  probes: Partial<Record<ProbeType, Script>>;
  /** What SIGTERM does (default: the container exits at once, 143). */
  onSigterm?: SigtermBehaviour;
}

/**
 * A container that handles SIGTERM: it exits `exitAfterMs` later with `exitCode`
 * (`Infinity`: it ignores SIGTERM and dies of the SIGKILL after the grace period, 137), and
 * meanwhile its probes answer from `probes` (default: as before).
 */
export interface SigtermBehaviour {
  exitAfterMs: number;
  exitCode: number;
  probes?: Script;
}

/** `sigterm: ignore` — PID 1 without a handler (a shell, `sleep`) ignores SIGTERM. */
export const IGNORE_SIGTERM: SigtermBehaviour = { exitAfterMs: Infinity, exitCode: 0 };

/** By container name, in every simulated pod. */
export type Behaviours = ReadonlyMap<string, ContainerBehaviour>;

export const PROBE_KINDS: readonly ProbeType[] = ['liveness', 'readiness', 'startup'];

/** The script a container instance plays (its exits, and probes without an override). */
export function containerScript(behaviours: Behaviours, name: string): Script {
  return behaviours.get(name)?.script ?? UP_SCRIPT;
}

/** The script a probe of `kind` of container `name` answers from. */
export function probeScript(behaviours: Behaviours, name: string, kind: ProbeType): Script {
  const b = behaviours.get(name);
  return b?.probes[kind] ?? b?.script ?? UP_SCRIPT;
}
