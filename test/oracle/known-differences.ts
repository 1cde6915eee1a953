/**
 * Differences the oracle found that are not fixed on this branch, each with the section of
 * docs/differences.md ("Found by the oracle") giving the reason and the upstream line. A
 * difference the oracle reports that matches none of these fails `npm run oracle` and the tests.
 * Patterns are narrow on purpose and limited to the scenarios where the difference was seen.
 */
import type { EventAlias } from './compare.js';

export interface KnownDifference {
  /** Scenarios it applies to (names), or '*' for all. */
  scenarios: string[] | '*';
  /** Matched against the comparison's difference line. */
  pattern: RegExp;
  /** The heading in docs/differences.md. */
  doc: string;
}

/** Event wordings of kubelet 1.35 probelet does not have yet (src/kubelet): compared under the kubelet's. */
export const EVENT_ALIASES: EventAlias[] = [
  { reason: 'Created', probelet: /^Created container: .*$/, kubelet: 'Container created' },
  { reason: 'Started', probelet: /^Started container .*$/, kubelet: 'Container started' },
  { reason: 'Pulled', probelet: /^(Container image ".*" already present on machine)$/, kubelet: '$1 and can be accessed by the pod' },
];

/** The scenarios whose container is killed by a probe or exits and is restarted with back-off. */
const RESTARTING = [
  'exec-liveness-slow-app',
  'exec-liveness-always-fails',
  'startup-kills',
  'http-liveness-500',
  'tcp-liveness-refused',
  'initial-delay-multiple',
  'initial-delay-not-multiple',
  'sigterm-ignored-probe-grace',
  'probe-grace-floor',
  'onfailure-exit-1',
  'always-exit-0',
  'two-containers',
  'exits-while-probed',
  'pod-grace-sigterm-ignored',
  'sidecar-liveness-kill',
];

const RESTART_DOC = 'Restart after a probe kill, and BackOff events (section 3 of issue 19)';

export const KNOWN_DIFFERENCES: KnownDifference[] = [
  { scenarios: '*', pattern: /^wording of (Created|Started|Pulled): /, doc: 'Event wording of kubelet 1.35: Created, Started, Pulled' },
  { scenarios: '*', pattern: /^probe connections closed with FIN by the kubelet, RST by probelet$/, doc: 'Probes close with a reset' },
  { scenarios: '*', pattern: /^Warning events: \d+ on the kubelet \(its spam filter /, doc: "The event recorder's spam filter" },
  {
    scenarios: ['exits-while-probed'],
    pattern:
      /^(event (only on (the kubelet|probelet):|count of) spec\.containers\{app\} Warning Unhealthy: (Readiness|Liveness) probe (errored and resulted in unknown state: rpc error: |failed: {2}\(×\d+\)$)|first Unhealthy at )/,
    doc: "A probe racing its container's exit",
  },
  // The restart path: when a killed or exited container starts again, so how many instances,
  // kills, probe failures and BackOff events fit in the scenario, and when the first BackOff is.
  { scenarios: RESTARTING, pattern: /^\w+ starts: /, doc: RESTART_DOC },
  { scenarios: RESTARTING, pattern: /^first BackOff at /, doc: RESTART_DOC },
  { scenarios: RESTARTING, pattern: /^event count of (spec\.\w+\{[\w-]+\} )?(Warning BackOff|Warning Unhealthy|Normal Killing|Normal Created|Normal Started|Normal Pulled): /, doc: RESTART_DOC },
  { scenarios: RESTARTING, pattern: /^\w+ exits: \[((Error\/137|Completed\/0|Error\/1|Error\/2) ?)*\] on the kubelet, \[((Error\/137|Completed\/0|Error\/1|Error\/2) ?)*\] on probelet$/, doc: RESTART_DOC },
  { scenarios: RESTARTING, pattern: /^\w+ readiness( changes)?: /, doc: RESTART_DOC },
  { scenarios: RESTARTING, pattern: /^\w+ waiting reasons: \[(CrashLoopBackOff)?\] on the kubelet, \[(CrashLoopBackOff)?\] on probelet$/, doc: RESTART_DOC },
  // Seen once with 64 pods starting at once: an ExecSync of `true` outliving its 1 s.
  { scenarios: '*', pattern: /^event only on (the kubelet|probelet): spec\.\w+\{[\w-]+\} Warning Unhealthy: (Readiness|Liveness) probe failed: command timed out: "sh -c true" timed out after 1s \(×1\)$/, doc: 'Load: an exec probe timing out once' },
];

export function knownDifference(scenario: string, difference: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((k) => (k.scenarios === '*' || k.scenarios.includes(scenario)) && k.pattern.test(difference));
}
