/**
 * Behaviours written in a pod's annotation (`probelet node --runtime simulated`): the same
 * `CONTAINER[.PROBE]=SCRIPT` assignments as `probelet simulate -b`, separated by spaces,
 * semicolons or new lines, e.g. `app=up:1m,down app.readiness=down` (the readiness of
 * `app` never passes; the container itself is up for a minute, then down).
 */
import type { ProbeType } from '../prober/types.js';
import { PROBE_KINDS, type Behaviours, type ContainerBehaviour } from './behaviour.js';
import { parseScript, ScriptError } from './script.js';

/** The annotation a simulated node reads behaviours from by default. */
export const DEFAULT_BEHAVIOUR_ANNOTATION = 'probelet.dev/behaviour';

/**
 * Parses the annotation's text; throws a ScriptError naming the bad assignment and the fix.
 * `containers` are the pod's container names: an assignment to another is an error.
 */
export function parseBehaviourAnnotation(text: string, containers: readonly string[]): Behaviours {
  const behaviours = new Map<string, ContainerBehaviour>();
  for (const item of text.split(/[\s;]+/).filter((x) => x !== '')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new ScriptError(`${JSON.stringify(item)}: expected CONTAINER[.PROBE]=SCRIPT, e.g. app=down:30s,up or app.readiness=down`);
    const [name = '', probe, ...extra] = item.slice(0, eq).split('.');
    if (!containers.includes(name)) throw new ScriptError(`${JSON.stringify(item)}: no container ${JSON.stringify(name)} in the pod (containers: ${containers.join(', ')})`);
    if (extra.length > 0 || (probe !== undefined && !PROBE_KINDS.includes(probe as ProbeType))) {
      throw new ScriptError(`${JSON.stringify(item)}: the probe must be one of ${PROBE_KINDS.join(', ')}`);
    }
    let script;
    try {
      script = parseScript(item.slice(eq + 1));
    } catch (err) {
      throw new ScriptError(`${JSON.stringify(item)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const b = behaviours.get(name) ?? { probes: {} };
    if (probe === undefined) b.script = script;
    else b.probes[probe as ProbeType] = script;
    behaviours.set(name, b);
  }
  return behaviours;
}
