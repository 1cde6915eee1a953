/**
 * What dockershim (the kubelet's Docker runtime until 1.24) asked the Docker Engine for, for
 * the fields probelet supports: a pod is an infra container (the pause image) that holds the
 * pod's network (its IP is the pod IP), IPC and — with `shareProcessNamespace` — PID
 * namespaces, and publishes the containers' `hostPort`s; each container joins them
 * (`container:<infra>`). Names are dockershim's (`k8s_POD_<pod>_<ns>_<uid>_<attempt>`,
 * `k8s_<container>_<pod>_<ns>_<uid>_<attempt>`), labels the CRI runtime's (io.kubernetes.*
 * and probelet's owner labels), so `docker ps` reads like it did on a dockershim node.
 */
import type Dockerode from 'dockerode';
import type { Container, Pod } from '../../api/types.js';
import { expandCommandLine } from '../env.js';
import { RESTART_COUNT_ANNOTATION, dnsConfig, ownerLabels, type Owner } from '../cri/pod-config.js';
import type { VolumeSource } from './volumes.js';

/** The pause image `npm run cri:up` builds and `npm run docker:up` loads. */
export const DEFAULT_PAUSE_IMAGE = 'probelet.local/pause:3.9';
/** dockershim's container-type label: `podsandbox` for the infra container, `container` for the others. */
export const CONTAINER_TYPE_LABEL = 'io.kubernetes.docker.type';
/**
 * dockershim's label naming a container's infra container: a node that adopts its pods after a
 * restart finds each container's sandbox by it (the Engine's list does not say which container
 * a `container:<id>` network joins on every engine).
 */
export const SANDBOX_ID_LABEL = 'io.kubernetes.sandbox.id';
/** The container's name in its pod (kuberuntime labels.go), read back when a node adopts it. */
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';

function podRef(pod: Pod): { namespace: string; name: string; uid: string } {
  const meta = pod.metadata ?? {};
  return { namespace: meta.namespace ?? 'default', name: meta.name ?? '', uid: meta.uid ?? '' };
}

function podLabels(pod: Pod, owner: Owner): Record<string, string> {
  const ref = podRef(pod);
  return { 'io.kubernetes.pod.name': ref.name, 'io.kubernetes.pod.namespace': ref.namespace, 'io.kubernetes.pod.uid': ref.uid, ...ownerLabels(owner) };
}

/** `8080/tcp` → bindings, for every `hostPort` of the pod's containers (dockershim published them on the infra container). */
function portBindings(pod: Pod): { exposed: Record<string, object>; bindings: Record<string, { HostIp: string; HostPort: string }[]> } {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, { HostIp: string; HostPort: string }[]> = {};
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      const key = `${p.containerPort}/${(p.protocol ?? 'TCP').toLowerCase()}`;
      exposed[key] = {};
      (bindings[key] ??= []).push({ HostIp: p.hostIP ?? '', HostPort: String(p.hostPort) });
    }
  }
  return { exposed, bindings };
}

/** The infra container: pause, the pod's hostname, DNS and published ports; host namespaces as the pod asks. */
export function infraCreateOptions(pod: Pod, owner: Owner, pauseImage: string, attempt = 0, resolvConf = '/etc/resolv.conf'): Dockerode.ContainerCreateOptions {
  const ref = podRef(pod);
  const spec = pod.spec;
  const hostNetwork = spec?.hostNetwork === true;
  const { exposed, bindings } = portBindings(pod);
  const dns = dnsConfig(pod, resolvConf);
  return {
    name: `k8s_POD_${ref.name}_${ref.namespace}_${ref.uid}_${attempt}`,
    Image: pauseImage,
    // A host-network container shares the node's UTS namespace: Docker refuses a hostname there.
    ...(hostNetwork ? {} : { Hostname: (spec?.hostname || ref.name).slice(0, 63) }),
    Labels: { ...(pod.metadata?.labels ?? {}), ...podLabels(pod, owner), [CONTAINER_TYPE_LABEL]: 'podsandbox' },
    ...(Object.keys(exposed).length > 0 ? { ExposedPorts: exposed } : {}),
    HostConfig: {
      NetworkMode: hostNetwork ? 'host' : 'default',
      IpcMode: spec?.hostIPC === true ? 'host' : 'shareable',
      ...(spec?.hostPID === true ? { PidMode: 'host' } : {}),
      ...(Object.keys(bindings).length > 0 && !hostNetwork ? { PortBindings: bindings } : {}),
      ...(dns && !hostNetwork ? { Dns: dns.servers, DnsSearch: dns.searches, DnsOptions: dns.options } : {}),
    },
  };
}

/** `runAsUser[:runAsGroup]` of the container, else of the pod; undefined: the image's user. */
export function userOf(pod: Pod, container: Container): string | undefined {
  const uid = container.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  const gid = container.securityContext?.runAsGroup ?? pod.spec?.securityContext?.runAsGroup;
  if (uid === undefined || uid === null) return gid === undefined || gid === null ? undefined : `0:${gid}`;
  return gid === undefined || gid === null ? String(uid) : `${uid}:${gid}`;
}

export interface ContainerCreateInput {
  pod: Pod;
  container: Container;
  attempt: number;
  infraID: string;
  env: ReadonlyMap<string, string>;
  owner: Owner;
  volumes: ReadonlyMap<string, VolumeSource>;
}

/**
 * A container joined to the infra container's namespaces. `command` replaces the image's
 * ENTRYPOINT and, then, its CMD too (Docker drops the image's CMD when Entrypoint is given, as
 * Kubernetes does); `args` alone replace CMD. Each is `$(VAR)`-expanded on its own.
 */
export function containerCreateOptions(input: ContainerCreateInput): Dockerode.ContainerCreateOptions {
  const { pod, container, attempt, infraID, env, owner, volumes } = input;
  const ref = podRef(pod);
  const joined = `container:${infraID}`;
  const command = container.command ? expandCommandLine({ name: container.name, command: container.command }, env) : undefined;
  const args = container.args ? expandCommandLine({ name: container.name, args: container.args }, env) : undefined;
  const user = userOf(pod, container);
  const mounts: Dockerode.MountSettings[] = [];
  for (const m of container.volumeMounts ?? []) {
    const source = volumes.get(m.name);
    if (!source) continue;
    const readOnly = m.readOnly === true || (source.kind === 'bind' && source.readOnly);
    mounts.push(source.kind === 'bind' ? { Type: 'bind', Source: source.path, Target: m.mountPath, ReadOnly: readOnly } : { Type: 'volume', Source: source.name, Target: m.mountPath, ReadOnly: readOnly });
  }
  return {
    name: `k8s_${container.name}_${ref.name}_${ref.namespace}_${ref.uid}_${attempt}`,
    Image: container.image ?? '',
    ...(command ? { Entrypoint: command } : {}),
    ...(args ? { Cmd: args } : {}),
    ...(container.workingDir ? { WorkingDir: container.workingDir } : {}),
    Env: [...env].map(([k, v]) => `${k}=${v}`),
    ...(user !== undefined ? { User: user } : {}),
    Labels: { ...podLabels(pod, owner), [CONTAINER_NAME_LABEL]: container.name, [SANDBOX_ID_LABEL]: infraID, [CONTAINER_TYPE_LABEL]: 'container', [RESTART_COUNT_ANNOTATION]: String(attempt) },
    HostConfig: {
      NetworkMode: joined,
      IpcMode: pod.spec?.hostIPC === true ? 'host' : joined,
      ...(pod.spec?.hostPID === true ? { PidMode: 'host' } : pod.spec?.shareProcessNamespace === true ? { PidMode: joined } : {}),
      ...(mounts.length > 0 ? { Mounts: mounts } : {}),
    },
  };
}
