/**
 * Kubernetes API shapes, used as they are from `kubernetes-types` so the output of
 * `kubectl get pod -o json` can be fed straight in. Only what the published types lack
 * (fields newer than the package) is added here.
 */
import type * as v1 from 'kubernetes-types/core/v1.js';

export type {
  Container,
  ContainerPort,
  ContainerState,
  ContainerStatus,
  EnvVar,
  EphemeralContainer,
  Event,
  EventList,
  EventSource,
  ExecAction,
  GRPCAction,
  HTTPGetAction,
  HTTPHeader,
  Lifecycle,
  LifecycleHandler,
  ObjectReference,
  Pod,
  PodCondition,
  PodList,
  PodSpec,
  PodStatus,
  Probe,
  TCPSocketAction,
} from 'kubernetes-types/core/v1.js';
export type { ListMeta, ObjectMeta, Status } from 'kubernetes-types/meta/v1.js';
/** `intstr.IntOrString` (ports may be numbers or names). */
export type IntOrString = number | string;

/** Container-level restart rules (KEP-5307, beta in 1.35); newer than `kubernetes-types`. */
export interface ContainerRestartRule {
  action: 'Restart';
  exitCodes?: { operator: 'In' | 'NotIn'; values?: number[] };
}

/** A container as the 1.35 API has it: `kubernetes-types` plus `restartPolicyRules`. */
export type ContainerWithRules = v1.Container & { restartPolicyRules?: ContainerRestartRule[] };
