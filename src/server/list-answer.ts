/**
 * Writes a list answer (`/probes`, `/pods`, `/events`) a piece at a time, each piece only
 * once the one before it was taken by the client. Built whole, one 8 MiB `/probes` answer
 * per client was in memory before its size could be measured against the answer budget:
 * 40 clients asking once each and never reading held hundreds of MiB (issue 33). Written this
 * way a client holds at most one piece (about {@link LIST_PIECE_CHARS}) beyond what the
 * socket buffers, and every piece is measured against the budget before it is made to wait.
 *
 * A list that fits in one piece is one ordinary answer with `Content-Length`; a longer one is
 * sent chunked. Either way the bytes are those of `JSON.stringify` of the whole list.
 */
import type { ServerResponse } from 'node:http';
import { setImmediate as turn } from 'node:timers/promises';
import type { ListReply } from './routes.js';

/** Characters gathered before a piece is written: large enough that a fast reader costs few writes, small beside the budget. */
export const LIST_PIECE_CHARS = 64 * 1024;

export interface ListBudget {
  /** Whether `bytes` more unread bytes of this answer fit (and are held); false cuts it. */
  fits(bytes: number): boolean;
  /** The answer cannot start: nothing is written yet, the refusal (503) is sent instead. */
  refuse(): void;
}

/**
 * Writes `reply` to `res` (the body dropped for HEAD, as Node does). Resolves once the last
 * piece is handed over, or when the client went away or was cut; rejects when reading the
 * items fails (the caller answers 500 if nothing was sent yet, or cuts the connection).
 */
export async function writeList(res: ServerResponse, reply: ListReply, budget: ListBudget): Promise<void> {
  const { head, items, tail } = reply.list;
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  let started = false;
  /** Whether the next `bytes` may go out: the first piece starts the answer (or is refused), a later one that does not fit cuts it. */
  const admit = (bytes: number, whole: boolean): boolean => {
    if (started) {
      if (budget.fits(res.writableLength + bytes)) return true;
      res.destroy();
      return false;
    }
    if (!budget.fits(bytes)) {
      budget.refuse();
      return false;
    }
    started = true;
    res.statusCode = reply.status;
    for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
    // The whole list in one piece: an ordinary answer with its length.
    if (whole) res.setHeader('Content-Length', bytes);
    return true;
  };
  let piece = head;
  let first = true;
  for (const item of items) {
    piece += `${first ? '' : ','}${JSON.stringify(item) ?? 'null'}`;
    first = false;
    if (piece.length < LIST_PIECE_CHARS) continue;
    if (!admit(Buffer.byteLength(piece), false)) return;
    const taken = res.write(piece);
    piece = '';
    // Not taken: wait until it is (or the client is gone); taken: let other requests in between pieces.
    await (taken ? turn() : Promise.race([new Promise<void>((resolve) => res.once('drain', resolve)), closed]));
    if (res.destroyed) return;
  }
  piece += tail;
  if (admit(Buffer.byteLength(piece), !started)) res.end(piece);
}
