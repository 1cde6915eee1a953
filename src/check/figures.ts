/**
 * Figures given per container on the command line — `--startup-time [POD/]CONTAINER=…` and
 * `--probe-p99 [POD/]CONTAINER.PROBE=…` — found for one container of one object.
 *
 * `POD` is the object's own name or the name `probelet run` gave its pod (`web-7d9c…-x2b4q`,
 * `db-0`): `run` prints it when two pods have a container of the same name, so the line it
 * suggests must find the right one. A key naming the pod wins over a bare container name.
 */
import { namesPodOf } from '../api/workloads.js';
import type { ContainerContext } from './types.js';

/** The figure for this container (`suffix` is `''` or `.liveness`, `.readiness`, `.startup`), when one was given. */
export function figureFor(figures: ReadonlyMap<string, number> | undefined, ctx: ContainerContext, suffix = ''): number | undefined {
  if (figures === undefined || figures.size === 0) return undefined;
  const own = `${ctx.container.name ?? ''}${suffix}`;
  for (const [key, value] of figures) if (key !== own && designates(key, ctx, suffix)) return value;
  return figures.get(own);
}

/**
 * Whether `key` designates this container (`suffix` as for {@link figureFor}): `CONTAINER`
 * plus the suffix exactly, or `POD/` and that, with POD naming this object's pod. The one
 * reading of a key, for finding a figure and for telling the user which keys found nothing.
 */
export function designates(key: string, ctx: ContainerContext, suffix: string): boolean {
  const own = `${ctx.container.name ?? ''}${suffix}`;
  if (key === own) return true;
  const slash = key.indexOf('/');
  return slash > 0 && key.slice(slash + 1) === own && namesPodOf(ctx.object.kind, ctx.object.value, key.slice(0, slash));
}
