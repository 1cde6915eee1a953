/**
 * Pod validation as the apiserver does it on a stored pod (`ValidateObjectMeta` +
 * `ValidatePodSpec`), limited to what running the pod and probing it depend on, with
 * upstream's order, field paths and wording. Every error is returned at once.
 */
import {
  checkHostPortConflicts,
  validateContainerCommon,
  validateContainerRestartPolicy,
  validateImageOnlyForPod,
  type ContainerLike,
} from './container-validation.js';
import { duplicate, FieldError, forbidden, invalid, notFound, notSupported, required } from './field-error.js';
import { isDNS1123Label, isDNS1123Subdomain } from './formats.js';
import { validateLifecycle, validateProbe } from './probe-validation.js';
import type { Container, ContainerRestartRule, ObjectMeta, Pod, PodSpec, Probe } from './types.js';
import { validateTemplateForKind } from './workload-validation.js';

export { validateProbe } from './probe-validation.js';

export interface PodValidationOptions {
  /**
   * Gate `ContainerRestartRules` (beta, on by default in 1.35): containers may set
   * `restartPolicy` (Always, Never, OnFailure) and `restartPolicyRules`. When false, only
   * init containers may set `restartPolicy`, and only to `Always` (the pre-1.34 rule).
   */
  containerRestartRules?: boolean;
  /**
   * The kind of the object the pod comes from: `Pod` (default) or a workload kind, whose
   * template is validated as upstream validates templates (no Pod-only rules) plus what the
   * kind adds (a Deployment's restartPolicy must be Always…; see workload-validation.ts).
   */
  kind?: string;
  /**
   * The pod is being created (default true): `ValidatePodCreate`'s rules apply (no ephemeral
   * containers, no nodeName while scheduling gates remain). False for pods that already
   * exist, as a node agent receives them from the apiserver.
   */
  create?: boolean;
}

type AnyContainer = Container & { restartPolicyRules?: ContainerRestartRule[]; targetContainerName?: string };

const PROBE_FIELDS = [
  ['livenessProbe', 'liveness'],
  ['readinessProbe', 'readiness'],
  ['startupProbe', 'startup'],
] as const;
const NOT_FOR_INIT = 'may not be set for init containers without restartPolicy=Always';
const NOT_FOR_EPHEMERAL = 'cannot be set for an Ephemeral Container';
const POD_RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

/**
 * Validates a pod the way the apiserver validates what it stores, so callers should run
 * `setPodDefaults` first (the apiserver defaults before it validates). Returns every error.
 */
export function validatePod(pod: Pod, options: PodValidationOptions = {}): FieldError[] {
  const rules = options.containerRestartRules ?? true;
  const spec: Partial<PodSpec> = pod.spec ?? {};
  const containers: AnyContainer[] = spec.containers ?? [];
  const initContainers: AnyContainer[] = spec.initContainers ?? [];
  const ephemeralContainers: AnyContainer[] = spec.ephemeralContainers ?? [];

  const errs = validateObjectMeta(pod.metadata ?? {});
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    errs.push(required('spec.terminationGracePeriodSeconds'));
  }
  const grace = spec.terminationGracePeriodSeconds ?? undefined;
  errs.push(...validateContainers(containers, rules, grace));
  errs.push(...validateInitContainers(initContainers, containers, rules, grace));
  errs.push(...validateEphemeralContainers(ephemeralContainers, containers, initContainers));
  const kind = options.kind ?? 'Pod';
  if (spec.hostNetwork === true) errs.push(...validatePodHostNetworkDeps(containers, kind === 'Pod'));
  const restartPolicy = spec.restartPolicy ?? '';
  if (restartPolicy.length === 0) errs.push(required('spec.restartPolicy'));
  else if (!POD_RESTART_POLICIES.includes(restartPolicy)) {
    errs.push(notSupported('spec.restartPolicy', restartPolicy, POD_RESTART_POLICIES));
  }
  if (kind === 'Pod') {
    // validatePodMetadataAndSpec's rules "only pertinent for pods and not pod templates".
    containers.forEach((ctr, i) => errs.push(...validateImageOnlyForPod(ctr, `spec.containers[${i}]`)));
    initContainers.forEach((ctr, i) => errs.push(...validateImageOnlyForPod(ctr, `spec.initContainers[${i}]`)));
    if (options.create ?? true) errs.push(...validatePodCreate(spec, ephemeralContainers));
  } else {
    if (ephemeralContainers.length > 0) errs.push(forbidden('spec.ephemeralContainers', 'ephemeral containers not allowed in pod template'));
    errs.push(...validateTemplateForKind(kind, spec));
  }
  return errs;
}

/**
 * `validatePodHostNetworkDeps`: on the node's network a container's port is the host's, so
 * `hostPort` must equal `containerPort` (regular containers only, as upstream). A Pod's unset
 * hostPort was defaulted to its containerPort (`setPodDefaults`); a template may leave it
 * unset (0), since its pods are defaulted when created, but no other value.
 */
function validatePodHostNetworkDeps(containers: readonly AnyContainer[], isPod: boolean): FieldError[] {
  const errs: FieldError[] = [];
  containers.forEach((ctr, i) => {
    (Array.isArray(ctr.ports) ? ctr.ports : []).forEach((port, j) => {
      const hostPort = port?.hostPort ?? 0;
      if ((isPod || hostPort !== 0) && hostPort !== port?.containerPort) {
        errs.push(invalid(`spec.containers[${i}].ports[${j}].hostPort`, hostPort, 'must match `containerPort` when `hostNetwork` is true'));
      }
    });
  });
  return errs;
}

/** What `ValidatePodCreate` adds for a pod being created. */
function validatePodCreate(spec: Partial<PodSpec>, ephemeralContainers: readonly AnyContainer[]): FieldError[] {
  const errs: FieldError[] = [];
  // Only the ephemeralcontainers subresource adds them, to a pod that exists.
  if (ephemeralContainers.length > 0) errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  if ((spec.nodeName ?? '') !== '' && (spec.schedulingGates?.length ?? 0) > 0) {
    errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  }
  return errs;
}

/** `ValidateObjectMeta` for a namespaced object whose names are DNS-1123 subdomains. */
function validateObjectMeta(meta: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = meta.generateName ?? '';
  if (generateName.length > 0) {
    for (const msg of isDNS1123Subdomain(maskTrailingDash(generateName))) {
      errs.push(invalid('metadata.generateName', generateName, msg));
    }
  }
  const name = meta.name ?? '';
  if (name.length === 0) errs.push(required('metadata.name', 'name or generateName is required'));
  else errs.push(...isDNS1123Subdomain(name).map((msg) => invalid('metadata.name', name, msg)));
  const namespace = meta.namespace ?? '';
  if (namespace.length === 0) errs.push(required('metadata.namespace'));
  else errs.push(...isDNS1123Label(namespace).map((msg) => invalid('metadata.namespace', namespace, msg)));
  return errs;
}

/**
 * A generateName prefix may end in '-'; upstream masks that before checking. Its slice
 * drops two characters, not one; reproduced so the same prefixes pass and fail.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

function validateContainers(containers: AnyContainer[], rules: boolean, grace: number | undefined): FieldError[] {
  const path = 'spec.containers';
  if (containers.length === 0) return [required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  containers.forEach((ctr, i) => {
    const idx = `${path}[${i}]`;
    errs.push(...validateContainerCommon(asContainerLike(ctr), idx));
    // Collisions with init and ephemeral names are reported on those, not here.
    if (names.has(ctr.name)) errs.push(duplicate(`${idx}.name`, ctr.name));
    else names.add(ctr.name);
    errs.push(...validateProbes(ctr, idx));
    if (isSet(ctr.lifecycle)) errs.push(...validateLifecycle(ctr.lifecycle, grace, `${idx}.lifecycle`));
    if (rules) errs.push(...validateContainerRestartPolicy(asContainerLike(ctr), idx));
    else if (isSet(ctr.restartPolicy)) errs.push(forbidden(`${idx}.restartPolicy`, 'may not be set for non-init containers'));
  });
  errs.push(...checkHostPortConflicts(containers.map(asContainerLike), path));
  return errs;
}

function validateInitContainers(inits: AnyContainer[], regular: AnyContainer[], rules: boolean, grace: number | undefined): FieldError[] {
  const path = 'spec.initContainers';
  const errs: FieldError[] = [];
  const names = new Set(regular.map((c) => c.name));
  inits.forEach((ctr, i) => {
    const idx = `${path}[${i}]`;
    errs.push(...validateContainerCommon(asContainerLike(ctr), idx));
    errs.push(...validateInitRestartPolicy(ctr, idx, rules));
    const restartAlways = ctr.restartPolicy === 'Always';
    if (names.has(ctr.name)) errs.push(duplicate(`${idx}.name`, ctr.name));
    else if (ctr.name) names.add(ctr.name);
    // Upstream checks each init container alone, so its paths always say initContainers[0].
    errs.push(...checkHostPortConflicts([asContainerLike(ctr)], path));
    if (restartAlways) {
      errs.push(...validateProbes(ctr, idx));
      if (isSet(ctr.lifecycle)) errs.push(...validateLifecycle(ctr.lifecycle, grace, `${idx}.lifecycle`));
    } else {
      if (isSet(ctr.lifecycle)) errs.push(forbidden(`${idx}.lifecycle`, NOT_FOR_INIT));
      for (const [field] of PROBE_FIELDS) {
        if (isSet(ctr[field])) errs.push(forbidden(`${idx}.${field}`, NOT_FOR_INIT));
      }
    }
  });
  return errs;
}

/** `validateInitContainerRestartPolicy`: sidecars are `Always`; other values need the restart-rules gate. */
function validateInitRestartPolicy(ctr: AnyContainer, idx: string, rules: boolean): FieldError[] {
  const policy = ctr.restartPolicy;
  const ruleCount = ctr.restartPolicyRules?.length ?? 0;
  if (!isSet(policy)) {
    return ruleCount > 0
      ? [required(`${idx}.restartPolicy`, 'must specify restartPolicy when restart rules are used')]
      : [];
  }
  if (!rules) return policy === 'Always' ? [] : [notSupported(`${idx}.restartPolicy`, policy, ['Always'])];
  if (policy !== 'Always') return validateContainerRestartPolicy(asContainerLike(ctr), idx);
  return ruleCount > 0
    ? [forbidden(`${idx}.restartPolicyRules`, 'restartPolicyRules are not allowed for init containers with restart policy Always')]
    : [];
}

function validateEphemeralContainers(
  ephemeral: AnyContainer[],
  regular: AnyContainer[],
  inits: AnyContainer[],
): FieldError[] {
  const path = 'spec.ephemeralContainers';
  const errs: FieldError[] = [];
  const others = new Set([...regular, ...inits].map((c) => c.name));
  const names = new Set(others);
  ephemeral.forEach((ctr, i) => {
    const idx = `${path}[${i}]`;
    errs.push(...validateContainerCommon(asContainerLike(ctr), idx));
    errs.push(...validateImageOnlyForPod(asContainerLike(ctr), idx));
    if (names.has(ctr.name)) errs.push(duplicate(`${idx}.name`, ctr.name));
    else names.add(ctr.name);
    const target = ctr.targetContainerName ?? '';
    if (target !== '' && !others.has(target)) errs.push(notFound(`${idx}.targetContainerName`, target));
    errs.push(...ephemeralForbiddenFields(ctr, idx));
  });
  return errs;
}

/**
 * Upstream allow-lists the fields an ephemeral container may set and forbids any other
 * that differs from its Go zero value, in struct order. A present list (even empty) or
 * pointer differs from zero; `resources` is a struct, so only content makes it differ.
 */
function ephemeralForbiddenFields(ctr: AnyContainer, idx: string): FieldError[] {
  const setFields: [string, boolean][] = [
    ['ports', isSet(ctr.ports)],
    ['resources', Object.values(ctr.resources ?? {}).some(isSet)],
    ['resizePolicy', isSet(ctr.resizePolicy)],
    ['restartPolicy', isSet(ctr.restartPolicy)],
    ['restartPolicyRules', isSet(ctr.restartPolicyRules)],
    ['livenessProbe', isSet(ctr.livenessProbe)],
    ['readinessProbe', isSet(ctr.readinessProbe)],
    ['startupProbe', isSet(ctr.startupProbe)],
    ['lifecycle', isSet(ctr.lifecycle)],
  ];
  return setFields.filter(([, set]) => set).map(([field]) => forbidden(`${idx}.${field}`, NOT_FOR_EPHEMERAL));
}

function validateProbes(ctr: AnyContainer, idx: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [field, kind] of PROBE_FIELDS) {
    const probe: Probe | undefined = ctr[field];
    if (isSet(probe)) errs.push(...validateProbe(probe, kind, `${idx}.${field}`));
  }
  return errs;
}

function asContainerLike(ctr: AnyContainer): ContainerLike {
  return ctr;
}

/** Go's nil check: a YAML key with no value decodes to null, which is "not set". */
function isSet<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}
