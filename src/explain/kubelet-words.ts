/**
 * The kubelet's own words, read back: what each event message it records means. The messages
 * are upstream's (pkg/kubelet/kuberuntime `killContainer`'s "Container %s failed %s probe, will
 * be restarted", pkg/kubelet/prober `Unhealthy` "%s probe failed: %s", the image puller's
 * `Failed to pull image "%s": %s`, `Back-off pulling image "%s"`, and the back-off's
 * "Back-off restarting failed container %s in pod %s"); probelet's kubelet records the same
 * (src/kubelet/, src/prober/), and test/explain/kubelet-words.test.ts reads the real kubelet's
 * messages of test/oracle/golden through these functions, so they cannot drift apart.
 *
 * Every pattern is anchored and linear (no nested quantifiers): messages quote probe output.
 */
import type { ProbeType } from '../prober/types.js';

/** Why the kubelet stopped a container, from its `Killing` event. */
export type KillCause = 'liveness' | 'startup' | 'deletion' | 'post-start-hook' | 'other';

export interface KillingWords {
  cause: KillCause;
  /** The container the message names (the event's field path names it too). */
  container?: string;
  /** `false`: `failed liveness probe` without `, will be restarted` (restartPolicy Never, or a sidecar). */
  willRestart: boolean;
}

const PROBE_KILL = /^(Init container|Container) (\S+) failed (liveness|startup) probe(, will be restarted)?$/;
const STOPPING = /^Stopping container (\S+)$/;

/** A `Killing` event's message, read. */
export function readKilling(message: string): KillingWords {
  const kill = PROBE_KILL.exec(message);
  if (kill) return { cause: kill[3] as 'liveness' | 'startup', container: kill[2], willRestart: kill[4] !== undefined || kill[1] === 'Init container' };
  const stop = STOPPING.exec(message);
  if (stop) return { cause: 'deletion', container: stop[1], willRestart: false };
  if (message === 'FailedPostStartHook') return { cause: 'post-start-hook', willRestart: true };
  return { cause: 'other', willRestart: false };
}

/** What a failed probe said, sorted into what it tells about the app. */
export type FailureKind =
  /** Nothing listens there: `connect: connection refused`, or no route. */
  | 'refused'
  /** The app did not answer within `timeoutSeconds`: `context deadline exceeded`, exec `command timed out`. */
  | 'timeout'
  /** An HTTP answer outside 200–399 (`statusCode` says which). */
  | 'http-status'
  /** A gRPC health answer other than SERVING, or an unknown service. */
  | 'grpc'
  /** An exec probe's command exited non-zero (the message is its output). */
  | 'exec'
  /** Anything else. */
  | 'other';

export interface UnhealthyWords {
  probe: ProbeType;
  /** `probe errored and resulted in unknown state`: the attempt could not be made; the kubelet discards it. */
  errored: boolean;
  /** The probe's own output, after `probe failed: `. */
  output: string;
  kind: FailureKind;
  statusCode?: number;
}

/** The correlator's prefix on an event combined from more than 10 similar ones (client-go `EventAggregatorByReasonMessageFunc`). */
const COMBINED = '(combined from similar events): ';
const UNHEALTHY = /^(Liveness|Readiness|Startup) probe (failed|errored and resulted in unknown state): /;
const STATUS_CODE = /^HTTP probe failed with statuscode: (\d{3})$/;
const REFUSED = /connect: connection refused|connect: no route to host|connect: network is unreachable/;
const TIMEOUT = /context deadline exceeded|Client\.Timeout exceeded|^command timed out|: i\/o timeout$|timeout: failed to connect service/;
const GRPC = /^service unhealthy \(responded with "|^error: health rpc probe failed/;

/** An `Unhealthy` event's message, read; undefined when it is not a probe's. */
export function readUnhealthy(message: string): UnhealthyWords | undefined {
  const text = message.startsWith(COMBINED) ? message.slice(COMBINED.length) : message;
  const head = UNHEALTHY.exec(text);
  if (!head) return undefined;
  const probe = (head[1] ?? '').toLowerCase() as ProbeType;
  const output = text.slice(head[0].length).trim();
  const errored = head[2] !== 'failed';
  const code = STATUS_CODE.exec(output);
  if (code) return { probe, errored, output, kind: 'http-status', statusCode: Number(code[1]) };
  return { probe, errored, output, kind: failureKind(output) };
}

function failureKind(output: string): FailureKind {
  if (TIMEOUT.test(output)) return 'timeout';
  if (REFUSED.test(output)) return 'refused';
  if (GRPC.test(output)) return 'grpc';
  // An exec probe's output is whatever the command printed (often nothing).
  if (!/^(Get|Post|Head) "|^dial tcp /.test(output)) return 'exec';
  return 'other';
}

/** The image of `Failed to pull image "X": …` / `Back-off pulling image "X"`, and what the pull said. */
export function readImagePull(message: string): { image: string; detail?: string } | undefined {
  const failed = /^Failed to pull image "([^"]*)": /.exec(message);
  if (failed) return { image: failed[1] ?? '', detail: message.slice(failed[0].length) };
  const backOff = /^Back-off pulling image "([^"]*)"/.exec(message);
  if (backOff) return { image: backOff[1] ?? '' };
  return undefined;
}

/** Waiting reasons that mean the image could not be had (kubelet images.ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName). */
export const IMAGE_WAITING_REASONS: ReadonlySet<string> = new Set(['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName']);

/** `back-off 40s restarting failed container=app pod=…`: the step in force, in seconds. */
export function readBackOffStep(message: string): number | undefined {
  // Go's duration: `10s`, `1m20s`, `5m0s`.
  const m = /^back-off (?:(\d+)m)?(\d+)s restarting/.exec(message);
  return m ? Number(m[1] ?? 0) * 60 + Number(m[2]) : undefined;
}

/**
 * The notices the kubelet writes in place of a log it cannot serve — with status 200, once the
 * stream has begun, so the API's answer looks like a log: `unable to retrieve container logs
 * for containerd://…` (kuberuntime GetContainerLogs: the runtime no longer knows the instance;
 * the kubelet keeps one dead instance per container) and `failed to try resolving symlinks in
 * path "…"` (its log file is gone). Not the app's words.
 */
const LOG_NOTICES = ['unable to retrieve container logs for ', 'failed to try resolving symlinks in path '];

/** Whether a log read through the API is one of the kubelet's notices instead of a log: one line that begins like one. */
export function isKubeletLogNotice(text: string): boolean {
  const body = text.trim();
  return !body.includes('\n') && LOG_NOTICES.some((notice) => body.startsWith(notice));
}
