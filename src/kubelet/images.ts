/**
 * The kubelet's image manager (`EnsureImageExists` in pkg/kubelet/images): before a
 * container is created, ask the runtime whether it has the image (`ImageStatus`), pull it
 * when the pull policy says so, and throttle failed pulls with their own back-off
 * (10 s doubling to 300 s, keyed by pod UID and image). Events and waiting reasons use
 * upstream's wording, because that is what users grep for:
 * `Pulling image "x"`, `Successfully pulled image "x" in 1.2s (1.2s including waiting).
 * Image size: 123 bytes.`, `Container image "x" already present on machine and can be accessed by the pod` (1.35, gate
 * KubeletEnsureSecretPulledImages on by default: images/image_manager.go EnsureImageExists),
 * `Failed to pull image "x": …`, `Back-off pulling image "x"`.
 *
 * A runtime without images (the process runtime) has nothing to pull: every container
 * passes.
 */
import type { Container, Pod } from '../api/types.js';
import type { ContainerRuntime } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { CrashLoopBackOff } from './backoff.js';

/** Waiting reasons of a container whose image is not there (kubelet `images.Err*`). */
export const ERR_IMAGE_PULL = 'ErrImagePull';
export const IMAGE_PULL_BACK_OFF = 'ImagePullBackOff';
export const ERR_IMAGE_NEVER_PULL = 'ErrImageNeverPull';
export const ERR_IMAGE_INSPECT = 'ImageInspectError';

export type ImageEventRecorder = (type: 'Normal' | 'Warning', reason: string, message: string) => void;

export type EnsureImageResult =
  | { ok: true }
  | {
      ok: false;
      /** The container's waiting reason (`ErrImagePull`, `ImagePullBackOff`, …). */
      reason: string;
      message: string;
      /** When a sync could make progress again. */
      retryAfterMs: number;
    };

/**
 * How long a failed pull shows `ErrImagePull` before the pod is synced again (and shows
 * `ImagePullBackOff` for the rest of the back-off): the kubelet's pod worker retries a
 * failed sync after a jittered back-off of its own, so users see both reasons in turn.
 */
const AFTER_PULL_FAILURE_SYNC_MS = 5_000;

export class ImageManager {
  /** client-go `flowcontrol.Backoff` with the kubelet's image settings (10 s, max 300 s). */
  private readonly backOff: CrashLoopBackOff;
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly clock: Clock,
  ) {
    this.backOff = new CrashLoopBackOff({ clock });
  }

  async ensureImageExists(pod: Pod, container: Container, record: ImageEventRecorder): Promise<EnsureImageResult> {
    const { imageStatus, pullImage } = this.runtime;
    const image = container.image ?? '';
    if (!imageStatus || !pullImage) return { ok: true };
    let present: boolean;
    try {
      present = (await imageStatus.call(this.runtime, image)) !== undefined;
    } catch (err) {
      const message = `Failed to inspect image "${image}": ${errorText(err)}`;
      record('Warning', 'InspectFailed', message);
      return { ok: false, reason: ERR_IMAGE_INSPECT, message, retryAfterMs: AFTER_PULL_FAILURE_SYNC_MS };
    }
    if (!shouldPullImage(container.imagePullPolicy, present)) {
      if (present) {
        record('Normal', 'Pulled', `Container image "${image}" already present on machine and can be accessed by the pod`);
        return { ok: true };
      }
      const message = `Container image "${image}" is not present with pull policy of Never`;
      record('Warning', ERR_IMAGE_NEVER_PULL, message);
      return { ok: false, reason: ERR_IMAGE_NEVER_PULL, message, retryAfterMs: AFTER_PULL_FAILURE_SYNC_MS * 10 };
    }
    const key = `${pod.metadata?.uid ?? ''}_${image}`;
    const failedAt = this.failedAt.get(key);
    if (failedAt !== undefined && this.backOff.isInBackOff(key, failedAt)) {
      const message = `Back-off pulling image "${image}"`;
      record('Normal', 'BackOff', message);
      const remaining = failedAt + this.backOff.get(key) - this.clock.now();
      return { ok: false, reason: IMAGE_PULL_BACK_OFF, message, retryAfterMs: Math.max(remaining, 1) };
    }
    record('Normal', 'Pulling', `Pulling image "${image}"`);
    const start = this.clock.now();
    try {
      const pulled = await pullImage.call(this.runtime, image, pod);
      const took = formatGoDuration(this.clock.now() - start);
      record('Normal', 'Pulled', `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${pulled.size ?? 0} bytes.`);
      this.failedAt.delete(key);
      this.backOff.gc();
      return { ok: true };
    } catch (err) {
      const detail = errorText(err);
      record('Warning', 'Failed', `Failed to pull image "${image}": ${detail}`);
      this.backOff.next(key, this.clock.now());
      this.failedAt.set(key, this.clock.now());
      return { ok: false, reason: ERR_IMAGE_PULL, message: detail, retryAfterMs: AFTER_PULL_FAILURE_SYNC_MS };
    }
  }

  /** Housekeeping: forget the failed pulls of pods that are gone, and back-off entries past their reset window. */
  gc(livePodUIDs: ReadonlySet<string>): void {
    for (const key of this.failedAt.keys()) {
      if (!livePodUIDs.has(key.slice(0, key.indexOf('_')))) this.failedAt.delete(key);
    }
    this.backOff.gc();
  }
}

/** `shouldPullImage`: Never → no; Always → yes; IfNotPresent (and unset) → when missing. */
export function shouldPullImage(policy: string | undefined, present: boolean): boolean {
  if (policy === 'Never') return false;
  if (policy === 'Always') return true;
  return !present;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
