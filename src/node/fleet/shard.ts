/**
 * `--shard I/N`: several processes (on one machine or several) each run a slice of one fleet.
 * Node k of the fleet (in the file's order, 0-based) belongs to shard `k mod N + 1`, so the
 * slices are disjoint, cover the fleet, and spread every pool over the processes alike. A
 * node's pods are the node's (`spec.nodeName`), so a pod is run by exactly one process; a
 * shard started again takes its nodes over under the same names and runs their pods anew.
 */

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

/** Parses `I/N` (1 ≤ I ≤ N); throws an Error whose message names the fix. */
export function parseShard(text: string): Shard {
  const slash = text.indexOf('/');
  const index = Number(text.slice(0, slash));
  const count = Number(text.slice(slash + 1));
  const digits = (s: string): boolean => s.length > 0 && s.length <= 5 && [...s].every((c) => c >= '0' && c <= '9');
  if (slash < 0 || !digits(text.slice(0, slash)) || !digits(text.slice(slash + 1)) || count < 1 || index < 1 || index > count) {
    throw new Error(`--shard ${JSON.stringify(text)}: expected I/N with 1 ≤ I ≤ N, e.g. 2/4 (the second of four processes holding one fleet)`);
  }
  return { index, count };
}

/** The items (nodes, in fleet order) shard `shard` owns. */
export function shardOf<T>(items: readonly T[], shard: Shard | undefined): T[] {
  if (shard === undefined) return [...items];
  return items.filter((_, k) => k % shard.count === shard.index - 1);
}
