/**
 * What all `/stream` clients together may cost. Each SSE client holds what it has not read
 * yet in its response's buffer (`writableLength`); a client that connects and never reads
 * keeps that growing. A cap per client alone let 500 such clients take 4.3 GB (issue 21), so
 * the budget is shared: a cap on how many streams are open, and one backlog budget for all
 * of them, the snapshot included.
 *
 * Every other large answer (`/probes`, `/pods`, `/events`, the dashboard's files) waits in
 * the same buffers when its client does not read: 200 clients that never read `/probes`
 * took `run` to a heap abort (issue 33). So they are held in the same budget until written
 * out ({@link StreamBudget.hold}); one that does not fit is refused with 503. The lists
 * (`/probes`, `/pods`, `/events`) are written a piece at a time (`list-answer.ts`), so what
 * one holds is a piece, never the whole answer.
 *
 * When every stream is taken, a new one takes the place of the stream furthest behind (the
 * oldest when none is): 32 clients that read a trickle held every place and kept the
 * dashboard out (issue 33). A reader that keeps up is never the one cut while another is
 * behind, and an EventSource cut reconnects.
 */
import type { ServerResponse } from 'node:http';

export interface StreamLimits {
  /** Streams open at once; one more takes the place of the one furthest behind (the oldest when none is). A dashboard tab holds one. */
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
  /**
   * Holds a one-off answer of `bytes` in the budget until it is written out (or its
   * connection closes), making room by cutting the clients furthest behind; false when it
   * cannot fit (answer 503, or cut an answer already started). An answer written in pieces
   * calls it again before each piece with what it will hold then (unread bytes and the piece).
   */
  hold(res: ServerResponse, bytes: number): boolean;
  /** Streams open now. */
  streams(): number;
  /** Unread bytes held for all clients now. */
  backlogBytes(): number;
}

export function createStreamBudget(limits: StreamLimits = STREAM_LIMITS): StreamBudget {
  /** Streams, oldest first (a Set keeps insertion order). */
  const open = new Set<ServerResponse>();
  /** One-off answers not yet written out, with the bytes each was let in with. */
  const held = new Map<ServerResponse, number>();
  const heldBytes = (res: ServerResponse): number => Math.max(res.writableLength, held.get(res) ?? 0);
  const backlogBytes = (): number => {
    let sum = 0;
    for (const res of open) sum += res.writableLength;
    for (const res of held.keys()) sum += heldBytes(res);
    return sum;
  };
  /** Cuts the clients furthest behind until `bytes` more fit in the shared budget; false when they cannot (only `keep` is behind). */
  const makeRoom = (bytes: number, keep: ServerResponse): boolean => {
    let total = backlogBytes();
    while (total + bytes > limits.totalBacklogBytes) {
      let furthest: ServerResponse | undefined;
      let furthestBytes = 0;
      for (const res of [...open, ...held.keys()]) {
        const bytes = held.has(res) ? heldBytes(res) : res.writableLength;
        if (res !== keep && bytes > furthestBytes) {
          furthest = res;
          furthestBytes = bytes;
        }
      }
      if (furthest === undefined || furthestBytes <= keep.writableLength) return false;
      total -= furthestBytes;
      open.delete(furthest);
      held.delete(furthest);
      furthest.destroy();
    }
    return true;
  };
  /** The stream furthest behind, the oldest among equals: the one a new stream replaces when all are taken. */
  const slowest = (): ServerResponse | undefined => {
    let slow: ServerResponse | undefined;
    for (const res of open) if (slow === undefined || res.writableLength > slow.writableLength) slow = res;
    return slow;
  };
  return {
    hold(res, bytes) {
      const again = held.delete(res);
      if (bytes > limits.totalBacklogBytes || !makeRoom(bytes, res)) return false;
      held.set(res, bytes);
      if (!again) {
        const release = (): void => void held.delete(res);
        res.once('finish', release);
        res.once('close', release);
      }
      return true;
    },
    open(res, makeFirst) {
      if (open.size >= limits.maxStreams) {
        const slow = slowest();
        if (slow === undefined) return { refused: `${open.size} streams are open, the most this server serves at once` };
        open.delete(slow);
        slow.destroy();
      }
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
