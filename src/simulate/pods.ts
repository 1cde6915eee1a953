/**
 * The pods a simulation runs: admitted as the apiserver would (defaults, validation) but,
 * unlike `probelet run`, without a command per container — nothing is executed, images
 * need not exist — and with identities that are the same every time (UIDs from the pod's
 * position, created at the simulation's origin), so outputs are reproducible.
 */
import { admitPods, type AdmitResult } from '../api/admit.js';
import { toSerializedTime } from '../api/time.js';
import type { Pod } from '../api/types.js';
import { SIMULATION_ORIGIN_MS } from './simulation.js';

export function admitForSimulation(pods: readonly Pod[]): AdmitResult {
  return admitPods(
    pods.map((pod, i) => {
      const metadata = { ...pod.metadata, uid: simulatedUID(i), creationTimestamp: toSerializedTime(SIMULATION_ORIGIN_MS) };
      if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName}${String(i).padStart(5, '0')}`;
      delete metadata.deletionTimestamp;
      delete metadata.deletionGracePeriodSeconds;
      const { status: _status, ...rest } = pod;
      return { ...rest, metadata };
    }),
  );
}

/** `00000000-0000-4000-8000-000000000001`-style: a valid UUID, numbered by position. */
function simulatedUID(index: number): string {
  return `00000000-0000-4000-8000-${(index + 1).toString(16).padStart(12, '0')}`;
}
