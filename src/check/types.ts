/**
 * The vocabulary of `probelet check`: what a rule sees, what it reports, and the timing
 * budgets computed per container. Rules are data plus one function each (one file per
 * family under `rules/`); budgets come from `budgets.ts`, the one place the timing
 * formulas live. `check/` never runs anything: it imports `api/` and the pure helpers of
 * `prober/` that state the semantics, never `kubelet/` or `runtime/`.
 */
import type { FieldPath, ManifestObject } from '../api/documents.js';
import type { Container, Pod } from '../api/types.js';
import type { ProbeType } from '../prober/types.js';

export type Severity = 'error' | 'warning' | 'info';

/** One finding, in the exact JSON shape `check -o json` prints (plus nothing). */
export interface Finding {
  rule: string;
  severity: Severity;
  file: string;
  line: number;
  column: number;
  object: ObjectRef;
  /** The container the finding is about, when it is about one. */
  container?: string;
  /** The field path inside the object (`spec.template.spec.containers[0].livenessProbe.periodSeconds`). */
  field: string;
  message: string;
  /** Why it does not count: an annotation in the manifest, or the baseline. */
  suppression?: Suppression;
  /** For rendered input (`check --helm`): the chart template the object came from; `file`, `line` and `column` are the rendered output's. */
  template?: string;
}

/**
 * Something in the input that is neither a finding nor a problem: it changes no exit code,
 * but must not pass unseen — a `probelet.dev/ignore` annotation naming no rule or no
 * container, which suppresses nothing (the finding it meant stands and counts).
 */
export interface InputNote {
  severity: 'warning';
  file: string;
  line: number;
  column: number;
  object: ObjectRef;
  /** Where in the object (`metadata.annotations[probelet.dev/ignore]`). */
  field: string;
  message: string;
  /** For rendered input: the chart template the object came from. */
  template?: string;
}

/** A finding looked at and accepted: written to SARIF as its `suppressions` entry. */
export interface Suppression {
  /** SARIF's kinds: `inSource` (an annotation in the manifest), `external` (the baseline file). */
  kind: 'inSource' | 'external';
  /** The annotation key (`probelet.dev/ignore.web`), or `baseline FILE`. */
  by: string;
  /** The reason written beside it, when there is one. */
  justification?: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * How long a container has, in seconds, from the kubelet's semantics (defaults applied).
 * `null` means unbounded (no probe can take the container down or out of service).
 */
export interface ContainerBudget {
  file: string;
  object: ObjectRef;
  container: string;
  /** The probe kinds the container has, in the order liveness, readiness, startup. */
  probes: ProbeType[];
  /** How long the app may take to start before it is killed. */
  startupBudgetSeconds: number | null;
  /** The earliest the container can be Ready (null: never gated, Ready as soon as started); a probe past a delay can come up to a second early (`startedAt` is read in whole seconds). */
  earliestReadySeconds: number | null;
  /** From a hang (after start-up) to the container being killed, kill grace included. */
  hangToKillSeconds: number | null;
  /** From a hang to the container being taken out of service (Ready → False). */
  hangToNotReadySeconds: number | null;
  /** Liveness and readiness probes that never fail on a hang (a tcpSocket probe, an exec probe that reads a file), and why. */
  hangBlind?: { probe: ProbeType; reason: string }[];
}

/** Which kind of container inside the pod. Sidecars are restartable init containers. */
export type ContainerRole = 'container' | 'init' | 'sidecar';

/** What a rule gets for one container of one object. */
export interface ContainerContext {
  object: ManifestObject;
  /** The pod with the apiserver's defaults applied (probes defaulted too). */
  pod: Pod;
  container: Container;
  role: ContainerRole;
  /** Field path of the container inside the object, e.g. `['spec','template','spec','containers',0]`. */
  path: FieldPath;
  budget: ContainerBudget;
  options: CheckOptions;
}

export interface CheckOptions {
  /** `--startup-time [POD/]CONTAINER=DURATION`: how long each named container needs to start, in seconds (see figures.ts). */
  startupTimes: ReadonlyMap<string, number>;
  /** Measured probe duration p99 in seconds per `[POD/]CONTAINER.PROBE` (from `probelet run`'s measurements), when given. */
  measuredP99?: ReadonlyMap<string, number>;
}

/** A finding before it is placed: the rule fills in what it knows; the runner adds file, line, column and object. */
export interface RuleFinding {
  severity?: Severity;
  /** Path inside the object; its line and column are looked up. */
  path: FieldPath;
  message: string;
}

export interface Rule {
  /** Kebab-case id, e.g. `probe-port-unresolved`. */
  id: string;
  severity: Severity;
  /** One line: what it checks. */
  summary: string;
  /** `--explain`: why (with the upstream issue that shows the harm), how to fix it, an example. */
  explain: string;
  /** Equivalent rules of other linters (`kube-linter liveness-port`, …) for the README table. */
  equivalents?: readonly string[];
  /** Checks one container. Pod-level rules look at `ctx.pod` and report once, from the first container. */
  check(ctx: ContainerContext): RuleFinding[];
}
