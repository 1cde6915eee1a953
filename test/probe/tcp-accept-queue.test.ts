/**
 * When a tcpSocket probe stops passing a hung app, measured on this kernel: the app listens
 * with a backlog of 4 and never accepts (its event loop is blocked, a real hang). The kernel
 * completes each probe's connection into the accept queue, and the probe's close does not
 * take it out (only accept() does), so the queue fills: Linux holds backlog + 1 connections
 * (`sk_acceptq_is_full` is `>`, not `>=`) and then drops the SYN, and the next probe times
 * out with the Go dialer's words. `check` says this number beside the "never" of a tcpSocket
 * probe's hang budget (src/check/budgets.ts `hangBlindness`), and docs/check.md quotes it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { probeTcp } from '../../src/probe/tcp.js';
import { dialTimeoutText } from '../../src/probe/net-errors.js';
import { ACCEPT_QUEUE_EXTRA } from '../../src/check/budgets.js';
import { startHungApp, type StalledListener } from '../helpers/stalled-listener.js';

const BACKLOG = 4;
let app: StalledListener | undefined;
afterAll(async () => app?.close());

describe('a tcpSocket probe against a hung app whose accept queue fills (real kernel, 127.0.0.1)', () => {
  it(`passes backlog + ${ACCEPT_QUEUE_EXTRA} = ${BACKLOG + ACCEPT_QUEUE_EXTRA} times with a listen backlog of ${BACKLOG}, then times out`, async () => {
    app = await startHungApp(BACKLOG);
    const outcomes: string[] = [];
    // Probes one after another, as a worker does; stop at the first failure.
    for (let i = 0; i < 3 * BACKLOG; i++) {
      const outcome = await probeTcp('127.0.0.1', app.port, 1000);
      outcomes.push(outcome.result === 'success' ? 'success' : outcome.output);
      if (outcome.result !== 'success') break;
    }
    expect(outcomes).toEqual([...Array<string>(BACKLOG + ACCEPT_QUEUE_EXTRA).fill('success'), dialTimeoutText('127.0.0.1', app.port)]);
  });
});
