/**
 * Lookups by name in a pod's lists (container specs, container statuses) in O(1) instead of
 * a scan: a pod of n containers looked up each of its n containers by a scan, n² per status
 * sync and per probe period (a pod of 1,000 containers took a minute to stop). Upstream
 * scans (`podutil.GetContainerStatus`); the answer is the same: the *first* entry of that
 * name, as a scan finds it.
 */

/** The first entry of each name. */
export function firstByName<T extends { name: string }>(list: readonly T[] | null | undefined): Map<string, T> {
  const index = new Map<string, T>();
  for (const item of list ?? []) if (!index.has(item.name)) index.set(item.name, item);
  return index;
}

const frozenIndexes = new WeakMap<readonly object[], Map<string, unknown>>();

/**
 * The first entry named `name`. A frozen list (the status manager's snapshots, read by every
 * worker on every tick) is indexed once and the index kept with it; a list that may still
 * change is scanned.
 */
export function findByName<T extends { name: string }>(list: readonly T[] | null | undefined, name: string): T | undefined {
  if (list == null) return undefined;
  if (!Object.isFrozen(list)) {
    for (const item of list) if (item.name === name) return item;
    return undefined;
  }
  let index = frozenIndexes.get(list) as Map<string, T> | undefined;
  if (index === undefined) {
    index = firstByName(list);
    frozenIndexes.set(list, index);
  }
  return index.get(name);
}
