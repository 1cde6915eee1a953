/**
 * What a diagnosis is: one cause per container, with its evidence, a fix naming fields and
 * numbers, and the numbers the summary quotes. The shape of `explain -o json`'s `diagnoses`.
 */
import type { Container } from '../api/types.js';
import type { CauseId, Statement } from './causes.js';
import type { RestartStep } from './restarts.js';
import type { Verification } from './verify.js';

/** A change to the container (strategic-merge shape: merged into the container of that name). */
export type ContainerPatch = Partial<Container> & { name: string };

export interface Fix {
  text: string;
  /** The change, when it is one of the container's fields. */
  patch?: ContainerPatch;
}

export interface Diagnosis {
  container: string;
  cause: CauseId;
  title: string;
  /** One paragraph: what happened, in numbers. */
  summary: string;
  evidence: Statement[];
  fix?: Fix;
  /** Other causes seen beside the main one (e.g. SIGTERM ignored on a probe kill). */
  also: { cause: CauseId; summary: string }[];
  /** The numbers the summary quotes, by name, for scripts and tests. */
  numbers: Record<string, number>;
  /** The kills and restarts of the runs explain knows, each with the kubelet rule's branch and why (restart-rule.ts). */
  restarts: RestartStep[];
  /** `--verify`: the fix simulated (or why it cannot be). */
  verify?: Verification | { skipped: string };
}

export interface DiagnoseOptions {
  /** When the pod and events were read (epoch ms): ages of events are measured from it. */
  nowMs: number;
  /** The container's last log lines (`kubectl logs --previous`), when they were read. */
  logs?: ReadonlyMap<string, readonly string[]>;
}
