/**
 * `probelet run`'s input: every manifest loaded, every pod admitted, and every problem
 * printed at once with its file, line and field, so one pass fixes them all. Objects
 * without a pod template (Services, ConfigMaps…) are passed over with a one-line note; a
 * workload runs one pod, named as its controller would name it. A bad document or an
 * invalid pod only drops itself: the others still run.
 */
import type { AdmitResult } from '../../api/admit.js';
import { formatProblem, loadManifests, skippedNote, type ManifestConfig, type ManifestProblem } from '../../api/documents.js';
import { podsOf, withoutRefusedWorkloads } from '../../api/manifest.js';
import type { Pod } from '../../api/types.js';
import { admitForLocalRun, type LocalRunAdmission } from '../../kubelet/admission.js';
import type { CliIO } from '../io.js';

/**
 * The pods of every file, in order, and how many problems (dropped documents) were printed
 * (`loadProblems`: the documents' own, for what reads the files again);
 * `pods` undefined (after printing why) when there is nothing to run.
 */
export async function loadPods(
  files: readonly string[],
  io: CliIO,
  nowMs: number = Date.now(),
): Promise<{ pods: Pod[] | undefined; problems: number; configs: ManifestConfig[]; loadProblems: ManifestProblem[] }> {
  const load = await loadManifests(files);
  const found = podsOf(load.objects, { naming: 'controller', nowMs });
  const stored = withoutRefusedWorkloads(found.pods);
  const pods = stored.pods;
  const problems = [...found.problems, ...stored.problems];
  for (const problem of [...load.problems, ...problems]) io.stderr(`probelet: ${formatProblem(problem)}\n`);
  const note = skippedNote(load.skipped);
  if (note) io.stderr(`probelet: ${note}\n`);
  const count = load.problems.length + problems.length;
  if (pods.length === 0) {
    io.stderr(`probelet: no pods in ${files.join(', ')}\n`);
    return { pods: undefined, problems: count, configs: [], loadProblems: load.problems };
  }
  return { pods: pods.map((p) => p.pod), problems: count, configs: load.configs ?? [], loadProblems: load.problems };
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
export function admitAndReport(pods: readonly Pod[], io: CliIO, options: LocalRunAdmission = {}): AdmitResult {
  const result = admitForLocalRun(pods, options);
  printRejected(result, io);
  return result;
}

export function printRejected(result: AdmitResult, io: CliIO): void {
  for (const rejected of result.errors) {
    const lines = rejected.errors.map((e) => `  * ${String(e)}\n`).join('');
    io.stderr(`probelet: Pod ${JSON.stringify(rejected.pod)} is invalid:\n${lines}`);
  }
}
