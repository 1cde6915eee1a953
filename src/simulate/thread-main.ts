/**
 * A simulation thread (see threads.ts): runs its nodes with `localNodes` and answers the
 * main thread's requests one at a time, then ends when told to finish.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { localNodes } from './nodes.js';
import { startSimulation } from './simulation.js';
import type { ThreadData, ThreadReply, ThreadRequest } from './threads.js';

if (parentPort === null) throw new Error('thread-main runs as a worker thread of simulate()');
const port = parentPort;
const data = workerData as ThreadData;
const nodes = localNodes(data.groups, data.options, startSimulation, data.first);

// A request that fails rejects here, unhandled: the thread ends with the error, which the
// main thread's `error` listener turns into the simulation's failure.
port.on('message', (request: ThreadRequest) => void answer(request));

async function answer(request: ThreadRequest): Promise<void> {
  if (request.type === 'advance') {
    const reply: ThreadReply = { type: 'advanced', reported: await nodes.advance(request.ms) };
    port.postMessage(reply);
  } else {
    const reply: ThreadReply = { type: 'finished', results: await nodes.finish() };
    port.postMessage(reply);
    port.close();
  }
}
