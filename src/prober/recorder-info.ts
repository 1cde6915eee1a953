import {
  DEFAULT_PROBE_FAILURE_THRESHOLD,
  DEFAULT_PROBE_PERIOD_SECONDS,
  DEFAULT_PROBE_SUCCESS_THRESHOLD,
  DEFAULT_PROBE_TIMEOUT_SECONDS,
} from '../api/defaults.js';
import type { Container, Pod, Probe } from '../api/types.js';
import type { ProbeHandlerKind, ProbeRingInfo } from './recorder.js';
import type { ProbeType } from './types.js';

/** What a flight-recorder ring is about, from a worker's pod and probe (API defaults for omitted fields). */
export function ringInfoOf(pod: Pod, container: Container, probeType: ProbeType, spec: Probe): ProbeRingInfo {
  return {
    podUID: pod.metadata?.uid ?? '',
    pod: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? 'default',
    container: container.name,
    probeType,
    handler: handlerKindOf(spec),
    periodSeconds: spec.periodSeconds || DEFAULT_PROBE_PERIOD_SECONDS,
    timeoutSeconds: spec.timeoutSeconds || DEFAULT_PROBE_TIMEOUT_SECONDS,
    successThreshold: spec.successThreshold || DEFAULT_PROBE_SUCCESS_THRESHOLD,
    failureThreshold: spec.failureThreshold || DEFAULT_PROBE_FAILURE_THRESHOLD,
  };
}

function handlerKindOf(spec: Probe): ProbeHandlerKind {
  if (spec.exec) return 'exec';
  if (spec.httpGet) return 'httpGet';
  if (spec.tcpSocket) return 'tcpSocket';
  if (spec.grpc) return 'grpc';
  return 'none';
}
