/** Holds the machine's cluster state-dir lock for this process's life, or rejects naming its holder. `script`: cluster/lock.sh's path, for a bundled caller. */
export function takeClusterLock(what: string, script?: string): Promise<void>;
