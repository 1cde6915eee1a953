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

/**
 * Event wordings compared under the kubelet's (the mechanism stays for the next wording change).
 * None left: probelet says `Container created`, `Container started` and `… already present on
 * machine and can be accessed by the pod` like kubelet 1.35.
 */
export const EVENT_ALIASES: EventAlias[] = [];

/**
 * Where a probe-killed or exited container in back-off shows differently (docs/differences.md
 * traces it): whether a kill restarts at once or backs off, and so the CrashLoopBackOff, the
 * readiness and the BackOff count, turn on the requeue jitter's draw and the run's timing; a
 * pod worker's pending update gives the kubelet one more BackOff where probelet's `run` coalesces.
 */
const BACKOFF_STATUS = [
  'exec-liveness-slow-app',
  'exec-liveness-always-fails',
  'http-liveness-500',
  'tcp-liveness-refused',
  'sigterm-ignored-probe-grace',
  'pod-grace-sigterm-ignored',
  'onfailure-exit-1',
  'always-exit-0',
  'two-containers',
  'exits-while-probed',
  'sidecar-liveness-kill',
  'exec-timeout-liveness',
  'onfailure-liveness-kill',
  'grpc-service-liveness',
  'initial-delay-multiple',
];
const BACKOFF_DOC = 'A probe-killed container in back-off: status and BackOff events';
/** A sidecar that exits 0 shows Completed, not CrashLoopBackOff, on both agents now (fixed). */
const BACKOFF_WAITING = BACKOFF_STATUS.filter((s) => s !== 'sidecar-liveness-kill');
const JITTER_DOC = "The pod worker's requeue jitter after a back-off";

export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    scenarios: ['exits-while-probed'],
    pattern:
      /^(event (only on (the kubelet|probelet):|count of) spec\.containers\{app\} Warning Unhealthy: (Readiness|Liveness) probe (errored and resulted in unknown state: rpc error: |failed: {2}\(×\d+\)$)|first Unhealthy at |event order: .* is spec\.containers\{app\} Warning Unhealthy: (Readiness|Liveness) probe errored and resulted in unknown state: rpc error: )/,
    doc: "A probe racing its container's exit",
  },
  // After the first back-off a sync is requeued at Jitter(expiry − now, 0.5): one late restart
  // can leave the next kill outside the back-off, so the later restarts are one draw of many.
  { scenarios: ['exec-liveness-slow-app', 'startup-kills'], pattern: /^\w+ (starts|exits): /, doc: JITTER_DOC },
  { scenarios: ['exec-liveness-slow-app'], pattern: /^event count of spec\.containers\{app\} Warning Unhealthy: Liveness probe failed: : \d+ on the kubelet, \d+ on probelet$/, doc: JITTER_DOC },
  { scenarios: BACKOFF_STATUS, pattern: /^first BackOff at /, doc: BACKOFF_DOC },
  { scenarios: BACKOFF_STATUS, pattern: /^event count of spec\.\w+\{[\w-]+\} Warning BackOff: /, doc: BACKOFF_DOC },
  { scenarios: BACKOFF_STATUS, pattern: /^event only on probelet: spec\.\w+\{[\w-]+\} Warning BackOff: Back-off restarting failed container /, doc: BACKOFF_DOC },
  { scenarios: BACKOFF_STATUS, pattern: /^\w+ readiness( changes)?: /, doc: BACKOFF_DOC },
  { scenarios: BACKOFF_WAITING, pattern: /^\w+ waiting reasons: (\[\] on the kubelet, \[CrashLoopBackOff\]|\[CrashLoopBackOff\] on the kubelet, \[\]) on probelet$/, doc: BACKOFF_DOC },
  // Seen once (the last run): the kubelet restarted at once after the 2nd kill, probelet backed off.
  { scenarios: ['exec-liveness-always-fails'], pattern: /^app starts: \d+ on the kubelet \[[\d, ]+\], \d+ on probelet \[[\d, ]+\]$/, doc: BACKOFF_DOC },
  // Seen once: the kubelet's Ready came with (or before) the status of its first start.
  { scenarios: ['readiness-at-start'], pattern: /^app readiness: \[\] on the kubelet, \[true\] on probelet$/, doc: 'Ready at the first start' },
  // Seen with 82 pods starting at once, on both agents: an ExecSync of `true` outliving its 1 s.
  { scenarios: '*', pattern: /^event only on (the kubelet|probelet): spec\.\w+\{[\w-]+\} Warning Unhealthy: (Readiness|Liveness) probe failed: command timed out: "sh -c true" timed out after 1s \(×[1-3]\)$/, doc: 'Load: an exec probe timing out once' },
  // Under the full oracle's load (44 scenarios at once) the three containers' starts spread out
  // differently on each agent, and with them the readiness failures before each is ready.
  {
    scenarios: ['three-containers-readiness'],
    pattern: /^event count of spec\.containers\{[bc]\} Warning Unhealthy: Readiness probe failed: : \d+ on the kubelet, \d+ on probelet$/,
    doc: "A new container's first probe comes sooner under probelet — fixed",
  },
  // An instance started and killed within one sync (its postStart failed) shows running in the
  // kubelet's status only when a relist fell inside the hook: one start fewer, in some runs.
  { scenarios: ['poststart-exec-fails'], pattern: /^app starts: \d+ on the kubelet \[[\d, ]+\], \d+ on probelet \[[\d, ]+\]$/, doc: 'A container killed by its postStart hook: seen running or not' },
];

export function knownDifference(scenario: string, difference: string): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((k) => (k.scenarios === '*' || k.scenarios.includes(scenario)) && k.pattern.test(difference));
}
