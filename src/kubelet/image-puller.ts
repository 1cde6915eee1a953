/**
 * The kubelet's image pullers (upstream puller.go): with `serializeImagePulls` (the default,
 * true) one pull at a time across the node — the others wait in a queue, in the order they
 * were asked for (`serialImagePuller`); with it false, pulls run at once, at most
 * `maxParallelImagePulls` of them when set (`parallelImagePuller`'s tokens). Each pull reports
 * how long the runtime's call took (`pullDuration`): the `Pulled` event shows that and, beside
 * it, the time including the wait for a turn.
 */
import type { Clock } from '../util/clock.js';

export interface ImagePullerOptions {
  /** `serializeImagePulls` (KubeletConfiguration; default true, false when `maxParallelImagePulls` ≥ 2). */
  serializeImagePulls?: boolean;
  /** `maxParallelImagePulls` (only with `serializeImagePulls: false`; unset or < 1: no limit). */
  maxParallelImagePulls?: number;
}

/** A pull's outcome with the runtime call's own duration (the wait for a turn left out). */
export interface TimedPull<T> {
  value: T;
  pullMs: number;
}

export type ImagePuller = <T>(pull: () => Promise<T>) => Promise<TimedPull<T>>;

/**
 * `serializeImagePulls` as the kubelet defaults it (v1beta1 defaults.go): true unless
 * `maxParallelImagePulls` is 2 or more.
 */
export function serializeImagePulls(options: ImagePullerOptions): boolean {
  return options.serializeImagePulls ?? !(options.maxParallelImagePulls !== undefined && options.maxParallelImagePulls >= 2);
}

/** KubeletConfiguration validation of the two settings, in its words; undefined when valid. */
export function validateImagePullOptions(options: ImagePullerOptions): string | undefined {
  const max = options.maxParallelImagePulls;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) return `invalid configuration: maxParallelImagePulls ${max} must be a positive number`;
  if (serializeImagePulls(options) && max !== undefined && max > 1) {
    return 'invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false';
  }
  return undefined;
}

/** The puller the options ask for: serial, or parallel with an optional limit. */
export function createImagePuller(clock: Clock, options: ImagePullerOptions = {}): ImagePuller {
  const max = options.maxParallelImagePulls;
  const limit = serializeImagePulls(options) ? 1 : max !== undefined && max >= 1 ? max : Infinity;
  let running = 0;
  const waiting: Array<() => void> = [];
  const turn = (): Promise<void> => {
    if (running < limit) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => waiting.push(resolve));
  };
  const done = (): void => {
    const next = waiting.shift();
    // The turn passes straight to the next in line: `running` stays as it is.
    if (next) next();
    else running--;
  };
  return async <T>(pull: () => Promise<T>): Promise<TimedPull<T>> => {
    await turn();
    const start = clock.now();
    try {
      const value = await pull();
      return { value, pullMs: clock.now() - start };
    } finally {
      done();
    }
  };
}
