/**
 * Who plays which script: a container's own script (its answers to every probe, and when
 * it exits) and per-probe-kind overrides (`app.readiness=` — readiness that depends on a
 * database while liveness is fine). A container without any is `up` from the start, except
 * a plain init container, which completes (`INIT_SCRIPT`) as init containers do.
 */
import type { Container, Pod } from '../api/types.js';
import type { ProbeType } from '../prober/types.js';
import { UP_SCRIPT, type Script } from './script.js';

/**
 * The script of a plain (not restartable) init container with none given: it runs for a
 * moment and exits 0, so the pod goes on to its app containers — an init container that
 * never finished would hold the pod in Init for ever. Sidecars (restartable) stay `up`.
 */
export const INIT_SCRIPT: Script = [
  { state: { kind: 'up' }, durationMs: 1000 },
  { state: { kind: 'exit', code: 0 }, durationMs: Infinity },
];

/** Whether `container` runs to completion before the others: an init container without `restartPolicy: Always`. */
export function isPlainInit(pod: Pod, container: Container): boolean {
  return container.restartPolicy !== 'Always' && (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
}

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

/** The script a container instance plays (its exits, and probes without an override); `plainInit`: see {@link INIT_SCRIPT}. */
export function containerScript(behaviours: Behaviours, name: string, plainInit = false): Script {
  return behaviours.get(name)?.script ?? (plainInit ? INIT_SCRIPT : UP_SCRIPT);
}

/** The script a probe of `kind` of container `name` answers from. */
export function probeScript(behaviours: Behaviours, name: string, kind: ProbeType): Script {
  const b = behaviours.get(name);
  return b?.probes[kind] ?? b?.script ?? UP_SCRIPT;
}
