/**
 * Per-container rules of the apiserver's pod validation that a locally run pod depends on:
 * names, ports and the container-level restart policy (KEP-5307). Probe rules live in
 * `probe-validation.ts`; the container lists are walked by `validation.ts`.
 */
import { duplicate, FieldError, invalid, notSupported, required, tooMany } from './field-error.js';
import { isDNS1123Label, isValidPortName, isValidPortNum } from './formats.js';
import type { ContainerPort, ContainerRestartRule } from './types.js';

/** The container fields these checks read; regular, init and ephemeral containers all have them. */
export interface ContainerLike {
  name: string;
  image?: string | null;
  ports?: ContainerPort[];
  restartPolicy?: string;
  restartPolicyRules?: ContainerRestartRule[];
}

/**
 * Upstream's `validateContainerOnlyForPod`: a Pod's image may not start or end with
 * whitespace. Pod templates keep the older, looser rule (OpenShift uses `" "` as a
 * placeholder image in templates), so this runs for Pods and ephemeral containers only.
 */
export function validateImageOnlyForPod(ctr: ContainerLike, path: string): FieldError[] {
  const image = ctr.image ?? '';
  return image.trim().length === image.length ? [] : [invalid(`${path}.image`, image, 'must not have leading or trailing whitespace')];
}

/** `sets.List` order (sorted), as upstream prints it. */
const SUPPORTED_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const SUPPORTED_CONTAINER_RESTART_POLICIES = ['Always', 'Never', 'OnFailure'];
const SUPPORTED_RULE_ACTIONS = ['Restart'];
const SUPPORTED_RULE_OPERATORS = ['In', 'NotIn'];
const MAX_RESTART_RULES = 20;
const MAX_EXIT_CODE_VALUES = 255;

/**
 * The part of `validateContainerCommon` probelet keeps: a DNS-1123 label name, an image
 * (every container of every kind: pods and templates alike; only a Pod's image is also
 * checked for surrounding spaces, see {@link validateImageOnlyForPod}) and valid ports.
 */
export function validateContainerCommon(ctr: ContainerLike, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = ctr.name ?? '';
  if (name.length === 0) errs.push(required(`${path}.name`));
  else errs.push(...isDNS1123Label(name).map((msg) => invalid(`${path}.name`, name, msg)));
  if ((ctr.image ?? '').length === 0) errs.push(required(`${path}.image`));
  errs.push(...validateContainerPorts(ctr.ports ?? [], `${path}.ports`));
  return errs;
}

function validateContainerPorts(ports: readonly ContainerPort[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const idx = `${path}[${i}]`;
    const name = port.name ?? '';
    if (name.length > 0) {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) errs.push(...msgs.map((msg) => invalid(`${idx}.name`, name, msg)));
      else if (names.has(name)) errs.push(duplicate(`${idx}.name`, name));
      else names.add(name);
    }
    const containerPort = port.containerPort ?? 0;
    if (containerPort === 0) errs.push(required(`${idx}.containerPort`));
    else errs.push(...isValidPortNum(containerPort).map((msg) => invalid(`${idx}.containerPort`, containerPort, msg)));
    const hostPort = port.hostPort ?? 0;
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((msg) => invalid(`${idx}.hostPort`, hostPort, msg)));
    const protocol = port.protocol ?? '';
    if (protocol.length === 0) errs.push(required(`${idx}.protocol`));
    else if (!SUPPORTED_PROTOCOLS.includes(protocol)) {
      errs.push(notSupported(`${idx}.protocol`, protocol, SUPPORTED_PROTOCOLS));
    }
  });
  return errs;
}

/**
 * `checkHostPortConflicts`: the same protocol/hostIP/hostPort twice. Paths index into
 * `containers` as given, which is why upstream reports every init container as `[0]`
 * (it checks them one at a time); callers reproduce that by passing a one-element list.
 */
export function checkHostPortConflicts(containers: readonly ContainerLike[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((ctr, ci) => {
    (ctr.ports ?? []).forEach((port, pi) => {
      const hostPort = port.hostPort ?? 0;
      if (hostPort === 0) return;
      const key = `${port.protocol ?? ''}/${port.hostIP ?? ''}/${hostPort}`;
      if (seen.has(key)) errs.push(duplicate(`${path}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return errs;
}

/**
 * `validateContainerRestartPolicy` (gate `ContainerRestartRules`, beta and on in 1.35):
 * a container-level policy must be Always, Never or OnFailure, and rules need a policy,
 * the `Restart` action and an `exitCodes` clause.
 */
export function validateContainerRestartPolicy(ctr: ContainerLike, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = ctr.restartPolicyRules ?? [];
  const policy = ctr.restartPolicy;
  if (policy === undefined || policy === null) {
    if (rules.length === 0) return errs;
    errs.push(required(`${path}.restartPolicy`, 'must specify restartPolicy when restart rules are used'));
  } else if (!SUPPORTED_CONTAINER_RESTART_POLICIES.includes(policy)) {
    errs.push(notSupported(`${path}.restartPolicy`, policy, SUPPORTED_CONTAINER_RESTART_POLICIES));
  }
  if (rules.length > MAX_RESTART_RULES) {
    errs.push(tooMany(`${path}.restartPolicyRules`, rules.length, MAX_RESTART_RULES));
  }
  rules.forEach((rule, i) => {
    const rulePath = `${path}.restartPolicyRules[${i}]`;
    const action: string = rule.action ?? '';
    if (!SUPPORTED_RULE_ACTIONS.includes(action)) {
      errs.push(notSupported(`${rulePath}.action`, action, SUPPORTED_RULE_ACTIONS));
    }
    const exitCodes = rule.exitCodes;
    if (exitCodes === undefined || exitCodes === null) {
      errs.push(required(`${rulePath}.exitCodes`, 'must be specified'));
      return;
    }
    const operator: string = exitCodes.operator ?? '';
    if (!SUPPORTED_RULE_OPERATORS.includes(operator)) {
      errs.push(notSupported(`${rulePath}.exitCodes.operator`, operator, SUPPORTED_RULE_OPERATORS));
    }
    const values = exitCodes.values ?? [];
    if (values.length > MAX_EXIT_CODE_VALUES) {
      errs.push(tooMany(`${rulePath}.exitCodes.values`, values.length, MAX_EXIT_CODE_VALUES));
    }
  });
  return errs;
}
