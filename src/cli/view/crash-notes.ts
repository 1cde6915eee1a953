/**
 * What `probelet run` shows when a container crashes: its exit code and the last lines of
 * its output, beside the status — what `kubectl describe pod` (Last State: Terminated,
 * Exit Code) and `kubectl logs --previous` would tell the user, without a second command.
 * The lines are taken when the runtime reports the exit, before the kubelet restarts the
 * container and the runtime forgets the instance.
 */
import type { ContainerRuntime } from '../../runtime/types.js';

/** Lines of output shown with a crash. */
export const CRASH_LOG_LINES = 5;
/** A longer line is cut: the note must stay readable beside the table. */
const MAX_LINE_CHARS = 200;

export interface CrashNote {
  podUID: string;
  /** The pod's name, as the view's rows show it. */
  pod: string;
  container: string;
  exitCode: number;
  /** `Error`, `OOMKilled`…, as the runtime reports it. */
  reason: string;
  /** The last lines of the instance's output, oldest first (may be empty). */
  log: string[];
  /** The instance's log file, when the runtime keeps one. */
  logPath?: string;
  /** Epoch ms of the exit. */
  finishedAt: number;
}

/**
 * Calls `onCrash` for every container instance that exits with a non-zero code while
 * `stopping()` is false (exits of the shutdown the user asked for are not crashes).
 * Returns the unsubscribe function.
 */
export function watchCrashes(
  runtime: ContainerRuntime,
  podName: (uid: string) => string,
  stopping: () => boolean,
  onCrash: (note: CrashNote) => void,
): () => void {
  return runtime.subscribe((event) => {
    const s = event.status;
    if (event.type !== 'exited' || stopping() || s.exitCode === undefined || s.exitCode === 0) return;
    onCrash({
      podUID: s.podUID,
      pod: podName(s.podUID),
      container: s.name,
      exitCode: s.exitCode,
      reason: s.reason ?? 'Error',
      log: lastLines(runtime.containerLogs(s.id), CRASH_LOG_LINES),
      ...(s.logPath !== undefined ? { logPath: s.logPath } : {}),
      finishedAt: s.finishedAt ?? Date.now(),
    });
  });
}

/** The last `n` non-blank lines of `text`, each cut to a readable length. */
export function lastLines(text: string, n: number): string[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  return lines.slice(-n).map((l) => (l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS - 1)}…` : l));
}

/** `exited with code 1 (Error); last lines of its log:` and the lines, as the text views print them. */
export function crashText(note: CrashNote): string[] {
  const head = `pod/${note.pod}{${note.container}}  exited with code ${note.exitCode} (${note.reason})`;
  if (note.log.length === 0) return [`${head}; its log is empty`];
  return [`${head}; last lines of its log:`, ...note.log.map((l) => `    | ${l}`)];
}
