/**
 * What `explain` and `check --cluster` need before any cluster is read: the error a failed
 * read is reported as, and the kinds a target may name. Kept apart from source.ts so that a
 * command's start does not load the API client (client-node opens a few hundred files as it
 * loads: under a low `ulimit -n` that alone would stop `probelet run`; see test/hostile/fd-budget).
 */

/** A problem with the cluster or the request: exit 2, the message names the fix. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/** Workload kinds `explain KIND/NAME` takes, by the names kubectl takes for them. */
export const WORKLOAD_KINDS: Record<string, string> = {
  pod: 'Pod',
  pods: 'Pod',
  po: 'Pod',
  deploy: 'Deployment',
  deployment: 'Deployment',
  deployments: 'Deployment',
  sts: 'StatefulSet',
  statefulset: 'StatefulSet',
  statefulsets: 'StatefulSet',
  ds: 'DaemonSet',
  daemonset: 'DaemonSet',
  daemonsets: 'DaemonSet',
  rs: 'ReplicaSet',
  replicaset: 'ReplicaSet',
  replicasets: 'ReplicaSet',
  job: 'Job',
  jobs: 'Job',
};

/** The kind a `KIND/NAME` target names (`deploy` → Deployment), own keys only (`constructor/x` is none). */
export function workloadKind(word: string): string | undefined {
  const key = word.toLowerCase();
  return Object.hasOwn(WORKLOAD_KINDS, key) ? WORKLOAD_KINDS[key] : undefined;
}
