/**
 * Process supervision: the one way probelet starts, watches and ends processes (exec probes,
 * exec into a container, the process runtime's containers). Everything outside `spawn/`
 * imports from here, never from the files behind it, so the room can change inside.
 *
 * - process.ts: a command in a process group of its own — tree kill, output caps, exit
 *   codes, timeouts, leftovers (`spawnGroup`, `runProcess`).
 * - spawn-primitive.ts: the start itself — the native addon (`native/spawn.c`, built by
 *   node-gyp into build/Release; the C source stays in native/ because binding.gyp builds
 *   it from there) or Node's `child_process.spawn`.
 * - spawner.ts, spawner-main.ts, spawner-protocol.ts: a small long-lived process that
 *   starts commands off the engine's address space.
 * - cgroup.ts, supervisor.ts, run-directory.ts: a cgroup per command, so that ending a
 *   command ends all it started, and a supervisor that ends them all (and removes the run's
 *   temporary directory) when probelet is killed; the next run removes what both left.
 * - exec-timeout.ts: Go's `exec.TimeoutError`, the one wording of a command timeout.
 */
export { cgroupHome, NO_CGROUP_GUARANTEE } from './cgroup.js';
export { claimRunDirectory, releaseRunDirectory, removeOrphanedRunDirectories, RUN_OWNER_FILE } from './run-directory.js';
export { commandTimedOut, ExecTimeoutError } from './exec-timeout.js';
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  endedByTimeout,
  killProcessTree,
  PIPE_DRAIN_GRACE_MS,
  runProcess,
  spawnError,
  spawnGroup,
  type OutputStream,
  type ProcessExit,
  type ProcessGroup,
  type ProcessResult,
  type RunProcessOptions,
  type SpawnError,
  type SpawnGroupOptions,
} from './process.js';
export { currentPrimitive, nativeAddonLoaded, usableAddon, type PrimitiveName } from './spawn-primitive.js';
export { DEATH_WINDOW_MS, MAX_DEATHS, openSpawner, type Spawner } from './spawner.js';
