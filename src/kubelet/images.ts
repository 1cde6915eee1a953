/**
 * The kubelet's image manager (`EnsureImageExists` in pkg/kubelet/images/image_manager.go):
 * before a container is created, ask the runtime whether it has the image (`ImageStatus`,
 * unless the policy is `Always`), pull it when the policy says so — with the credentials the
 * pod's pull secrets hold for it (pull-secrets.ts), through the serial or parallel puller
 * (image-puller.ts) — and throttle failed pulls with their own back-off (10 s doubling to
 * 300 s, keyed by pod UID and image). Events and waiting messages use kubelet 1.35's wording,
 * because that is what users grep for:
 * `Pulling image "x"`, `Successfully pulled image "x" in 1.2s (1.5s including waiting).
 * Image size: 123 bytes.`, `Container image "x" already present on machine and can be accessed
 * by the pod` (gate KubeletEnsureSecretPulledImages, on by default), `Failed to pull image "x":
 * …`, `Back-off pulling image "x"` (waiting message `Back-off pulling image "x": ErrImagePull:
 * …`), `Container image "x" is not present with pull policy of Never`.
 *
 * A runtime without images (the process runtime) has nothing to pull: every container
 * passes.
 */
import type { Container, Pod } from '../api/types.js';
import type { ContainerRuntime, RegistryAuth } from '../runtime/types.js';
import type { Clock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';
import { CrashLoopBackOff } from './backoff.js';
import { createImagePuller, type ImagePuller, type ImagePullerOptions } from './image-puller.js';
import { lookupPullCredentials, type PullSecret } from './pull-secrets.js';

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
      /** The container's waiting reason (`ErrImagePull`, `ImagePullBackOff`, …): the sync's error. */
      reason: string;
      message: string;
    };

export class ImageManager {
  /** client-go `flowcontrol.Backoff` with the kubelet's image settings (10 s, max 300 s). */
  private readonly backOff: CrashLoopBackOff;
  /** When each key's last pull failed, and the waiting message it left (`prevPullErrMsg`). */
  private readonly failed = new Map<string, { at: number; message: string }>();
  private readonly puller: ImagePuller;

  constructor(
    private readonly runtime: ContainerRuntime,
    private readonly clock: Clock,
    options: ImagePullerOptions = {},
  ) {
    this.backOff = new CrashLoopBackOff({ clock });
    this.puller = createImagePuller(clock, options);
  }

  /**
   * `EnsureImageExists` for one container. `pullSecrets` fetches the pod's pull secrets; it
   * is called only when a pull is to be made (upstream's credential lookup is lazy too).
   */
  async ensureImageExists(pod: Pod, container: Container, record: ImageEventRecorder, pullSecrets: () => Promise<PullSecret[]> = () => Promise.resolve([])): Promise<EnsureImageResult> {
    const { imageStatus, pullImage } = this.runtime;
    const image = container.image ?? '';
    if (!imageStatus || !pullImage) return { ok: true };
    const policy = container.imagePullPolicy;
    // `imagePullPrecheck`: Always pulls without asking the runtime first.
    let present = false;
    if (policy !== 'Always') {
      try {
        present = (await imageStatus.call(this.runtime, image)) !== undefined;
      } catch (err) {
        // Upstream prints the image ref it could not get: "".
        const message = `Failed to inspect image "": ${errorText(err)}`;
        record('Warning', 'InspectFailed', message);
        return { ok: false, reason: ERR_IMAGE_INSPECT, message };
      }
    }
    if (!shouldPullImage(policy, present)) {
      if (present) {
        record('Normal', 'Pulled', `Container image "${image}" already present on machine and can be accessed by the pod`);
        return { ok: true };
      }
      const message = `Container image "${image}" is not present with pull policy of Never`;
      record('Warning', ERR_IMAGE_NEVER_PULL, message);
      return { ok: false, reason: ERR_IMAGE_NEVER_PULL, message };
    }
    let credentials: RegistryAuth[];
    try {
      credentials = lookupPullCredentials(await pullSecrets(), image);
    } catch (err) {
      // A pull Secret whose config does not decode: upstream's keyring error, returned before
      // `pullImage` (so before its back-off check, no `Pulling`); the error is the waiting
      // reason and message (reasonCache), and `Error: …` the start's event.
      const detail = errorText(err);
      return { ok: false, reason: detail, message: detail };
    }
    // `pullImage`: a pull that failed lately waits out its back-off.
    const key = `${pod.metadata?.uid ?? ''}_${image}`;
    const failed = this.failed.get(key);
    if (failed !== undefined && this.backOff.isInBackOff(key, failed.at)) {
      const message = `Back-off pulling image "${image}"`;
      record('Normal', 'BackOff', message);
      return { ok: false, reason: IMAGE_PULL_BACK_OFF, message: `${message}: ${failed.message}` };
    }
    record('Normal', 'Pulling', `Pulling image "${image}"`);
    const start = this.clock.now();
    try {
      const { value: pulled, pullMs } = await this.puller(() => pullWithCredentials(this.runtime, pullImage, image, pod, credentials));
      const took = formatGoDuration(pullMs);
      const withWaiting = formatGoDuration(this.clock.now() - start);
      record('Normal', 'Pulled', `Successfully pulled image "${image}" in ${took} (${withWaiting} including waiting). Image size: ${pulled.size ?? 0} bytes.`);
      this.failed.delete(key);
      this.backOff.gc();
      return { ok: true };
    } catch (err) {
      const detail = errorText(err);
      record('Warning', 'Failed', `Failed to pull image "${image}": ${detail}`);
      this.backOff.next(key, this.clock.now());
      this.failed.set(key, { at: this.clock.now(), message: `${ERR_IMAGE_PULL}: ${detail}` });
      return { ok: false, reason: ERR_IMAGE_PULL, message: detail };
    }
  }

  /** Housekeeping: forget the failed pulls of pods that are gone, and back-off entries past their reset window. */
  gc(livePodUIDs: ReadonlySet<string>): void {
    for (const key of this.failed.keys()) {
      if (!livePodUIDs.has(key.slice(0, key.indexOf('_')))) this.failed.delete(key);
    }
    this.backOff.gc();
  }
}

/**
 * kuberuntime's `PullImage`: anonymously without credentials; else each set in turn until one
 * works, the errors of all joined as `utilerrors.NewAggregate` words them (one: itself; more:
 * `[a, b]`).
 */
async function pullWithCredentials(
  runtime: ContainerRuntime,
  pullImage: NonNullable<ContainerRuntime['pullImage']>,
  image: string,
  pod: Pod,
  credentials: readonly RegistryAuth[],
): ReturnType<NonNullable<ContainerRuntime['pullImage']>> {
  if (credentials.length === 0) return pullImage.call(runtime, image, pod);
  const errors: string[] = [];
  for (const auth of credentials) {
    try {
      return await pullImage.call(runtime, image, pod, auth);
    } catch (err) {
      const text = errorText(err);
      if (!errors.includes(text)) errors.push(text);
    }
  }
  throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
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
