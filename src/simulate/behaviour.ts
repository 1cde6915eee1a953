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
  /** SIGTERM is ignored: a stop waits for the grace period, then SIGKILL (exit 137). */
  ignoreSigterm?: boolean;
}

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
