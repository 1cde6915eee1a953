import type { Pod, PodStatus } from '../api/types.js';

export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** The cached result of a probe, as the results managers hold it. */
export type Result = 'success' | 'failure' | 'unknown';

export interface ResultUpdate {
  containerID: string;
  result: Result;
  podUID: string;
}

/** Where workers read the pod's last generated API status (the kubelet's status manager). */
export interface PodStatusProvider {
  getPodStatus(podUID: string): PodStatus | undefined;
}

export interface EventRef {
  pod: Pod;
  containerName?: string;
}

export interface EventRecorder {
  event(ref: EventRef, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** How a probe type is spelled in events, logs and the `probe_type` metric label. */
export function probeTypeName(probeType: ProbeType): 'Liveness' | 'Readiness' | 'Startup' | 'UNKNOWN' {
  switch (probeType) {
    case 'liveness':
      return 'Liveness';
    case 'readiness':
      return 'Readiness';
    case 'startup':
      return 'Startup';
    default:
      return 'UNKNOWN';
  }
}
