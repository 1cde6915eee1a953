import { probeTiming } from '../api/defaults.js';
import type { Container, Pod, Probe } from '../api/types.js';
import type { ProbeHandlerKind, ProbeRingInfo } from './recorder.js';
import type { ProbeType } from './types.js';

/** What a flight-recorder ring is about, from a worker's pod and probe (API defaults for omitted fields). */
export function ringInfoOf(pod: Pod, container: Container, probeType: ProbeType, spec: Probe): ProbeRingInfo {
  const t = probeTiming(spec);
  return {
    podUID: pod.metadata?.uid ?? '',
    pod: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? 'default',
    container: container.name,
    probeType,
    handler: handlerKindOf(spec),
    periodSeconds: t.period,
    timeoutSeconds: t.timeout,
    successThreshold: t.successThreshold,
    failureThreshold: t.failureThreshold,
  };
}

function handlerKindOf(spec: Probe): ProbeHandlerKind {
  if (spec.exec) return 'exec';
  if (spec.httpGet) return 'httpGet';
  if (spec.tcpSocket) return 'tcpSocket';
  if (spec.grpc) return 'grpc';
  return 'none';
}
