/**
 * What one connection may make the server hold. HTTP/1.1 lets a client pipeline requests
 * and never read the answers: node:http parses a whole received chunk at once and hands
 * every request in it to the handler, so 20 connections pipelining 64 KiB of `GET /probes`
 * each had ~1,300 answers built and queued, 3.6 GB, then a heap abort (issue 33). So, per
 * connection:
 * - an answer is built only once the one before it on the same connection was written out
 *   (`finish`) and the socket drained: a connection holds at most one built answer;
 * - a connection with more than {@link MAX_PIPELINED_REQUESTS} requests unanswered is cut.
 * A browser never pipelines, so neither limit touches the dashboard.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Requests one connection may have sent ahead of the answers it has read. */
export const MAX_PIPELINED_REQUESTS = 4;

interface ConnectionState {
  /** Requests received and not yet answered in full. */
  unanswered: number;
  /** Settles once the previous answer on this connection was written out (or the connection closed). */
  previous: Promise<void>;
  /** Settles when the connection closes. */
  closed: Promise<void>;
}

const connections = new WeakMap<Socket, ConnectionState>();

function stateOf(socket: Socket): ConnectionState {
  let state = connections.get(socket);
  if (state === undefined) {
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    state = { unanswered: 0, previous: Promise.resolve(), closed };
    connections.set(socket, state);
  }
  return state;
}

/**
 * Waits for this request's turn on its connection; false when the connection was cut (too
 * many requests ahead of their answers, or it closed meanwhile) and nothing must be answered.
 */
export async function awaitTurn(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const socket = req.socket;
  const state = stateOf(socket);
  state.unanswered++;
  if (state.unanswered > MAX_PIPELINED_REQUESTS) {
    cut(socket);
    return false;
  }
  const before = state.previous;
  // `finish`: the whole answer was handed to the kernel; a closed connection ends the wait too.
  const answered = new Promise<void>((resolve) => res.once('finish', () => resolve()));
  state.previous = Promise.race([answered, state.closed]).then(() => {
    state.unanswered--;
  });
  await before;
  if (socket.writableNeedDrain && !socket.destroyed) {
    await Promise.race([new Promise<void>((resolve) => socket.once('drain', () => resolve())), state.closed]);
  }
  return !socket.destroyed;
}

const cutSockets = new WeakSet<Socket>();

/**
 * Closes a connection that pipelined too far ahead. node:http goes on parsing the rest of the
 * chunk it was reading (up to 64 KiB, ~1,300 requests) and, once the socket closed, aborts each
 * of them with an error whose stack it captures: 20 such connections at once held the event
 * loop for seconds. Nobody reads those errors, so they are made without a stack: the limit is
 * 0 only while this socket's `close` listeners run (the first and last listeners are ours).
 */
function cut(socket: Socket): void {
  if (cutSockets.has(socket)) return;
  cutSockets.add(socket);
  let saved = Error.stackTraceLimit;
  socket.prependListener('close', () => {
    saved = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
  });
  socket.on('close', () => {
    Error.stackTraceLimit = saved;
  });
  socket.destroy();
}
