/**
 * A container's output: every byte goes to a log file (so nothing is lost to a bounded
 * buffer and `tail -f` works while the pod runs) and the last bytes stay in memory for
 * `containerLogs`, which the kubelet reads on every status report and must not cost a
 * disk read. stdout and stderr are interleaved as they arrived, raw (no CRI log-line
 * framing): the file is for people, not for a log shipper.
 */
import { closeSync, mkdirSync, open, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirs } from '../util/make-dirs.js';

/** Default bytes of output kept in memory per container. */
export const DEFAULT_LOG_TAIL_BYTES = 64 * 1024;

export interface ContainerLog {
  /** The log file's path. */
  readonly path: string;
  /**
   * Appends output to the file and the tail. Never throws: a failing disk (ENOSPC, EIO)
   * stops the file, not the container; the `onWriteError` given at open hears of it once.
   */
  write(chunk: Buffer): void;
  /** The last `tailBytes` bytes written, decoded as UTF-8 (a character cut at the start is dropped). */
  tail(): string;
  /** Closes the file; the tail stays readable. */
  close(): void;
}

/**
 * The kubelet's `/var/log/pods` layout under `runDir`:
 * `<runDir>/<namespace>_<pod>_<uid>/<container>/<attempt>.log`.
 */
export function containerLogPath(
  runDir: string,
  pod: { namespace: string; name: string; uid: string },
  container: string,
  attempt: number,
): string {
  return join(runDir, `${pod.namespace}_${pod.name}_${pod.uid}`, container, `${attempt}.log`);
}

/** Called once when writing a log file failed: what follows is not in the file. */
export type LogWriteErrorHandler = (path: string, error: Error) => void;

/** Creates the log file (and its directories) for appending; throws when that is impossible. */
export function openContainerLog(path: string, tailBytes: number = DEFAULT_LOG_TAIL_BYTES, onWriteError?: LogWriteErrorHandler): ContainerLog {
  mkdirSync(dirname(path), { recursive: true });
  return containerLog(path, openSync(path, 'a'), tailBytes, onWriteError);
}

/**
 * {@link openContainerLog} with the directories and the file created on libuv's pool: when
 * 1,000 containers start at once, 2,000 `mkdir`s and 1,000 `open`s took ≈ 0.6 s of the event
 * loop; there they overlap with the rest of the starts. Rejects when that is impossible.
 */
export async function openContainerLogAsync(
  path: string,
  tailBytes: number = DEFAULT_LOG_TAIL_BYTES,
  onWriteError?: LogWriteErrorHandler,
): Promise<ContainerLog> {
  // Not `mkdir(…, { recursive: true })`: out of inodes, its promise rejects with ENOENT (it
  // stats the directory it failed to make and reports that), not the ENOSPC that happened.
  await makeDirs(dirname(path));
  const fd = await new Promise<number>((resolve, reject) =>
    open(path, 'a', (err, opened) => (err ? reject(err) : resolve(opened))),
  );
  return containerLog(path, fd, tailBytes, onWriteError);
}

function containerLog(path: string, opened: number, tailBytes: number, onWriteError: LogWriteErrorHandler | undefined): ContainerLog {
  let fd: number | undefined = opened;
  const limit = Math.max(0, tailBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = false;

  const closeFile = (): void => {
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // Nothing left to do with a descriptor that cannot be closed.
    }
    fd = undefined;
  };

  const appendToFile = (chunk: Buffer): void => {
    try {
      for (let offset = 0; fd !== undefined && offset < chunk.length; ) {
        offset += writeSync(fd, chunk, offset);
      }
    } catch (err) {
      closeFile();
      // Said at once (a silent truncation looked like a clean run); never thrown at the container.
      try {
        onWriteError?.(path, err instanceof Error ? err : new Error(String(err)));
      } catch {
        // The handler's own failure changes nothing here.
      }
    }
  };

  const appendToTail = (chunk: Buffer): void => {
    if (limit === 0) {
      dropped = true;
      return;
    }
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) dropped = true;
    while (size > limit) {
      const first = chunks[0];
      if (first === undefined) break;
      if (size - first.length >= limit) {
        chunks.shift();
        size -= first.length;
      } else {
        // Copy the kept part so the dropped head's memory is released.
        chunks[0] = Buffer.from(first.subarray(size - limit));
        size = limit;
      }
    }
  };

  return {
    path,
    write(chunk) {
      appendToFile(chunk);
      appendToTail(chunk);
    },
    tail() {
      const bytes = Buffer.concat(chunks, size);
      let start = 0;
      // Skip UTF-8 continuation bytes of a character whose head was dropped.
      while (dropped && start < Math.min(3, bytes.length) && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
      return bytes.subarray(start).toString('utf8');
    },
    close: closeFile,
  };
}
