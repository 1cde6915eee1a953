/**
 * A container's environment and command line, built as the kubelet and containerd build
 * them, so that a manifest behaves the same here as on a cluster:
 *
 * - The runtime's base variables come first (`PATH`, `HOME`, `HOSTNAME`), like an image's
 *   `Env` plus containerd's `HOSTNAME`; the container's `env` overrides them.
 * - The container's `env` is resolved like the kubelet's `makeEnvironmentVariables`: in
 *   order, a literal `value` is `$(VAR)`-expanded against the entries declared *before* it
 *   (a later duplicate replaces the earlier value), a `valueFrom` is resolved; base
 *   variables are not visible to the expansion, exactly as image variables are not.
 * - `command` and `args` are expanded against the resolved `env` entries only (the
 *   kubelet's `ExpandContainerCommandAndArgs`), so `$(PATH)` or `$(HOSTNAME)` stays
 *   verbatim there as it does on a cluster.
 */
import { homedir } from 'node:os';
import type { Container, EnvVar, Pod } from '../api/types.js';
import { expandVars } from '../util/expand.js';
import { runtimeInputError } from './input-error.js';

/** The kubelet's default `PATH` (what images without an `Env` PATH get). */
export const KUBELET_DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Where the pod's variables come from besides the pod object itself. */
export interface PodEnvContext {
  /** The sandbox's IP, the value of `status.podIP` (the pod's status is not yet written). */
  podIP: string;
}

/**
 * The base environment of every container: `PATH`, `HOME` and `HOSTNAME`.
 *
 * `PATH` is the host's `PATH` followed by whichever directories of the kubelet's default
 * are missing: containers here run host binaries, and `command: [node, …]` must find the
 * same `node` the user's shell finds (nvm, Homebrew and the like live outside the
 * default), while a minimal host `PATH` still gets the standard directories.
 *
 * `HOME` is the host user's home, not a container's `/root`: the process runs as that
 * user, and tools that write under `$HOME` (npm, pip, shells) would fail on `/root`.
 */
export function baseEnvironment(hostname: string, hostPath: string | undefined = process.env.PATH): Record<string, string> {
  const dirs = (hostPath ?? '').split(':').filter((dir) => dir !== '');
  for (const dir of KUBELET_DEFAULT_PATH.split(':')) if (!dirs.includes(dir)) dirs.push(dir);
  return { PATH: dirs.join(':'), HOME: homedir(), HOSTNAME: hostname };
}

/**
 * The pod's hostname as the kubelet gives it to the sandbox: `spec.hostname` if set, else
 * the pod's name (cut to 63 characters); a `hostNetwork` pod sees the node's hostname.
 */
export function podHostname(pod: Pod, nodeHostname: string): string {
  if (pod.spec?.hostNetwork === true) return nodeHostname;
  const name = pod.spec?.hostname || pod.metadata?.name || '';
  return name.slice(0, 63);
}

/**
 * Resolves `container.env` (see the file comment). Rejects (throws a RuntimeInputError
 * naming the field) any source the local runtime cannot serve: there is no API server to
 * read ConfigMaps or Secrets from and no resource accounting to report.
 * `fieldPath` is the container's own path, e.g. `spec.containers[0]`.
 */
export function resolveContainerEnv(
  pod: Pod,
  container: Container,
  context: PodEnvContext,
  fieldPath: string,
): Map<string, string> {
  const vars = new Map<string, string>();
  const lookup = (name: string): string | undefined => vars.get(name);
  (container.env ?? []).forEach((variable, index) => {
    const path = `${fieldPath}.env[${index}]`;
    vars.set(variable.name, envValue(variable, pod, context, path, lookup));
  });
  return vars;
}

/** `command` followed by `args`, each `$(VAR)`-expanded against the resolved `env` entries. */
export function expandCommandLine(container: Container, vars: ReadonlyMap<string, string>): string[] {
  const lookup = (name: string): string | undefined => vars.get(name);
  return [...(container.command ?? []), ...(container.args ?? [])].map((part) => expandVars(part, lookup));
}

function envValue(
  variable: EnvVar,
  pod: Pod,
  context: PodEnvContext,
  path: string,
  lookup: (name: string) => string | undefined,
): string {
  // As upstream: a non-empty literal wins over valueFrom (validation forbids both anyway).
  if (variable.value) return expandVars(variable.value, lookup);
  const source = variable.valueFrom;
  if (!source) return '';
  if (source.fieldRef) return fieldRefValue(source.fieldRef.fieldPath, pod, context, `${path}.valueFrom.fieldRef`);
  const unsupported: [keyof typeof source, string][] = [
    ['resourceFieldRef', 'there is no resource accounting for local processes'],
    ['configMapKeyRef', 'ConfigMaps need an API server; use a literal value'],
    ['secretKeyRef', 'Secrets need an API server; use a literal value'],
  ];
  for (const [key, why] of unsupported) {
    if (source[key] !== undefined) {
      throw runtimeInputError(`${path}.valueFrom.${key}`, `not supported by the local runtime: ${why}`);
    }
  }
  const keys = Object.keys(source).join(', ') || 'nothing';
  throw runtimeInputError(`${path}.valueFrom`, `not supported by the local runtime: unknown source (${keys})`);
}

const SUPPORTED_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'status.podIP'];

function fieldRefValue(fieldPath: string, pod: Pod, context: PodEnvContext, path: string): string {
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'status.podIP':
      return context.podIP;
    default:
      throw runtimeInputError(
        `${path}.fieldPath`,
        `not supported by the local runtime: "${fieldPath}" (supported: ${SUPPORTED_FIELD_PATHS.join(', ')})`,
      );
  }
}
