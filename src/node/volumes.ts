/**
 * Volumes are not supported yet: every pod created through the API carries at least the
 * projected service-account token volume, so a pod is run without its volumes (and without
 * the mounts that name them) and the node says so in one Warning event per pod.
 */
import type { Container, Pod } from '../api/types.js';

/** The event's reason: probelet's own (the kubelet mounts volumes and has no such event). */
export const VOLUMES_NOT_MOUNTED_REASON = 'VolumesNotMounted';

/** The pod without volumes and volume mounts, and the names of the volumes it had. */
export function withoutVolumes(pod: Pod): { pod: Pod; dropped: string[] } {
  const dropped = (pod.spec?.volumes ?? []).map((v) => v.name);
  const hasMounts = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].some(
    (c) => (c.volumeMounts?.length ?? 0) > 0 || (c.volumeDevices?.length ?? 0) > 0,
  );
  if (dropped.length === 0 && !hasMounts || !pod.spec) return { pod, dropped };
  const strip = (c: Container): Container => {
    const { volumeMounts: _m, volumeDevices: _d, ...rest } = c;
    return rest;
  };
  const { volumes: _v, ...spec } = pod.spec;
  const out: Pod = {
    ...pod,
    spec: {
      ...spec,
      containers: spec.containers.map(strip),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(strip) } : {}),
    },
  };
  return { pod: out, dropped };
}

/** The Warning's message, naming each volume. */
export function volumesNotMountedMessage(dropped: readonly string[]): string {
  const list = dropped.map((n) => `"${n}"`).join(', ');
  return `probelet node does not mount volumes yet: running the pod without ${dropped.length === 1 ? 'volume' : 'volumes'} ${list} (its containers see no files from ${dropped.length === 1 ? 'it' : 'them'})`;
}
