/**
 * What all `/stream` clients together may cost. Each SSE client holds what it has not read
 * yet in its response's buffer (`writableLength`); a client that connects and never reads
 * keeps that growing. A cap per client alone let 500 such clients take 4.3 GB (issue 21), so
 * the budget is shared: a cap on how many streams are open, and one backlog budget for all
 * of them, the snapshot included.
 */
import type { ServerResponse } from 'node:http';

export interface StreamLimits {
  /** Streams open at once; one more is answered 503 with `Retry-After`. A dashboard tab holds one. */
  maxStreams: number;
  /** Unread bytes one client may hold; a client further behind is cut (its EventSource reconnects to a fresh snapshot). */
  maxBacklogBytes: number;
  /** Unread bytes all clients together may hold, snapshots included. */
  totalBacklogBytes: number;
}

/** The defaults: 32 streams, 8 MiB each, 32 MiB in all (not 32 × 8 MiB). */
export const STREAM_LIMITS: Readonly<StreamLimits> = {
  maxStreams: 32,
  maxBacklogBytes: 8 * 2 ** 20,
  totalBacklogBytes: 32 * 2 ** 20,
};

/** Seconds a refused client is told to wait (`Retry-After`). */
export const STREAM_RETRY_AFTER_S = 5;

/** One open stream: every byte it sends goes through `write`. */
export interface StreamSlot {
  /** The first message, made by `open`'s caller once the stream had a place. */
  first: string;
  /** Sends `chunk` when it fits this client's and the shared budget; otherwise cuts this stream and returns false. */
  write(chunk: string): boolean;
  /** Gives the slot back (idempotent); called when the stream closes. */
  release(): void;
}

export interface StreamBudget {
  /**
   * A slot for a new stream, or why there is none. `first` makes its first message (the
   * snapshot) and is called only when a stream is free; the message must fit the shared budget.
   */
  open(res: ServerResponse, first: () => string): StreamSlot | { refused: string };
  /** Streams open now. */
  streams(): number;
  /** Unread bytes held for all clients now. */
  backlogBytes(): number;
}

export function createStreamBudget(limits: StreamLimits = STREAM_LIMITS): StreamBudget {
  const open = new Set<ServerResponse>();
  const backlogBytes = (): number => {
    let sum = 0;
    for (const res of open) sum += res.writableLength;
    return sum;
  };
  /** Cuts the clients furthest behind until `bytes` more fit in the shared budget; false when they cannot (only `keep` is behind). */
  const makeRoom = (bytes: number, keep: ServerResponse): boolean => {
    let total = backlogBytes();
    while (total + bytes > limits.totalBacklogBytes) {
      let furthest: ServerResponse | undefined;
      for (const res of open) if (res !== keep && res.writableLength > 0 && (furthest === undefined || res.writableLength > furthest.writableLength)) furthest = res;
      if (furthest === undefined || furthest.writableLength <= keep.writableLength) return false;
      total -= furthest.writableLength;
      open.delete(furthest);
      furthest.destroy();
    }
    return true;
  };
  return {
    open(res, makeFirst) {
      if (open.size >= limits.maxStreams) return { refused: `${open.size} streams are open, the most this server serves at once` };
      const first = makeFirst();
      const firstBytes = Buffer.byteLength(first);
      if (firstBytes > limits.totalBacklogBytes) {
        return { refused: `the snapshot is ${mib(firstBytes)}, more than all streams may hold (${mib(limits.totalBacklogBytes)}): read /pods, /events and /probes instead` };
      }
      open.add(res);
      if (!makeRoom(firstBytes, res)) {
        open.delete(res);
        return { refused: `the streams open now hold ${mib(backlogBytes())} their clients have not read; no room for a ${mib(firstBytes)} snapshot` };
      }
      let released = false;
      const release = (): void => {
        released = true;
        open.delete(res);
      };
      return {
        first,
        write(chunk) {
          if (released) return false;
          const bytes = Buffer.byteLength(chunk);
          // The first message (the snapshot) may be larger than one client's cap: it was let in by `open`.
          if (res.writableLength + bytes > Math.max(limits.maxBacklogBytes, bytes) || !makeRoom(bytes, res)) {
            release();
            res.destroy();
            return false;
          }
          res.write(chunk);
          return true;
        },
        release,
      };
    },
    streams: () => open.size,
    backlogBytes,
  };
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
