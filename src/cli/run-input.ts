/**
 * `probelet run`'s input: every manifest loaded, every pod admitted, and every problem
 * printed at once with its field path, so one pass fixes them all. A file that cannot be
 * read or parsed stops the run before anything starts; an invalid pod only drops that pod.
 */
import type { AdmitResult } from '../api/admit.js';
import { loadManifestFile } from '../api/manifest.js';
import type { Pod } from '../api/types.js';
import { admitForLocalRun } from '../kubelet/admission.js';
import type { CliIO } from './io.js';

/** The pods of every file, in order; undefined (after printing why) when a file is unusable. */
export async function loadPods(files: readonly string[], io: CliIO): Promise<Pod[] | undefined> {
  const loaded = await Promise.allSettled(files.map((file) => loadManifestFile(file)));
  let failed = false;
  const pods: Pod[] = [];
  for (const result of loaded) {
    if (result.status === 'fulfilled') {
      pods.push(...result.value);
      continue;
    }
    failed = true;
    const reason: unknown = result.reason;
    io.stderr(`probelet: ${reason instanceof Error ? reason.message : String(reason)}\n`);
  }
  if (failed) return undefined;
  if (pods.length === 0) {
    io.stderr(`probelet: no pods in ${files.join(', ')}\n`);
    return undefined;
  }
  return pods;
}

/**
 * What the apiserver does to an object it creates, beyond defaulting: it stamps
 * `creationTimestamp` (the AGE column) and starts from an empty status, so a pod copied
 * from `kubectl get pod -o yaml` does not bring its old age, phase or deletion along.
 */
export function asNewPod(pod: Pod, nowMs: number): Pod {
  const metadata = { ...pod.metadata, creationTimestamp: new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
  delete metadata.deletionTimestamp;
  delete metadata.deletionGracePeriodSeconds;
  const { status: _status, ...rest } = pod;
  return { ...rest, metadata };
}

/**
 * Admits the pods as the local kubelet will (names, UIDs, defaults, validation, a command
 * per container) and prints each rejected pod with every one of its field errors.
 */
export function admitAndReport(pods: readonly Pod[], io: CliIO): AdmitResult {
  const result = admitForLocalRun(pods);
  printRejected(result, io);
  return result;
}

export function printRejected(result: AdmitResult, io: CliIO): void {
  for (const rejected of result.errors) {
    const lines = rejected.errors.map((e) => `  * ${String(e)}\n`).join('');
    io.stderr(`probelet: Pod ${JSON.stringify(rejected.pod)} is invalid:\n${lines}`);
  }
}
