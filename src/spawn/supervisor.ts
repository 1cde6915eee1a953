/**
 * What ends probelet's commands when probelet itself is killed without a chance to clean up
 * (SIGKILL, the OOM killer): a small shell process, in a session of its own, that holds the read end of a pipe whose only writer is probelet. When
 * the pipe closes — probelet's exit, however it came — it kills the run cgroup (every
 * container and command, `cgroup.kill` reaches the cgroups below), removes the cgroups,
 * and removes the run's temporary directory if probelet had not released it.
 *
 * Why a shell and not a Node process: ≈ 1 MB instead of ≈ 40 MB, and nothing to load. Why
 * not PR_SET_PDEATHSIG: it cannot be set through posix_spawn and covers only the direct
 * child; why not a subreaper: libuv reaps only the children it spawned, the rest would stay
 * zombies. Started once per process, with the run cgroup (cgroup.ts).
 */
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * Reads `dir PATH` (remove PATH if probelet dies) and `keep` (do not) lines until EOF; then
 * kills and removes the run cgroup ($1), waiting up to 5 s for its members to go. Terminal
 * signals are ignored: the terminal that hangs up on probelet must not take its supervisor
 * first. It stays probelet's child (detached, unref'd): Node destroys a child's stdin when
 * that child exits, so a double fork would close the pipe at once.
 */
const SCRIPT = `trap '' HUP INT QUIT PIPE
cg=$1 dir=
while read -r cmd arg; do
  case $cmd in dir) dir=$arg ;; keep) dir= ;; esac
done
if [ -d "$cg" ]; then
  echo 1 > "$cg/cgroup.kill"
  i=0
  while [ -d "$cg" ] && [ $i -lt 50 ]; do
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    [ -d "$cg" ] && sleep 0.1
    i=$((i + 1))
  done
fi
[ -n "$dir" ] && rm -rf -- "$dir"
exit 0`;

/** The supervisor's command line names it: `sh -c … probelet-supervisor <run cgroup>`. */
export const SUPERVISOR_NAME = 'probelet-supervisor';

let pipe: Writable | undefined;

/** Starts the supervisor of run cgroup `run` (once per process). */
export function startSupervisor(run: string): void {
  if (pipe) return;
  try {
    // detached: a session of its own, so the terminal's signals reach it not.
    const child = spawn('/bin/sh', ['-c', SCRIPT, SUPERVISOR_NAME, run], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => undefined);
    child.unref();
    const stdin = child.stdin;
    if (!stdin) return;
    stdin.on('error', () => undefined);
    // The pipe must not keep probelet alive: it is closed by probelet's exit.
    (stdin as Writable & { unref?: () => void }).unref?.();
    pipe = stdin;
  } catch {
    // No /bin/sh: only the guarantee against SIGKILL of probelet is lost; cgroups still work.
  }
}

/**
 * Asks the supervisor to remove `dir` (a run's temporary directory) if probelet dies before
 * {@link releaseDirectory}. A no-op without a supervisor (no cgroups).
 */
export function superviseDirectory(dir: string): void {
  if (!dir.includes('\n')) pipe?.write(`dir ${dir}\n`);
}

/** probelet dealt with the directory itself (removed it, or kept it on purpose). */
export function releaseDirectory(): void {
  pipe?.write('keep\n');
}
