/**
 * The lease thread (thread.ts): one lease controller per node of the process, on this
 * thread's own event loop and its own heartbeat connections, on the real clock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { KubeConfig } from '@kubernetes/client-node';
import { realClock } from '../../util/clock.js';
import { kubeClientsFrom } from '../kube.js';
import { startLeaseController, type LeaseController } from './controller.js';
import { SLOT_INTS, type LeaseThreadData, type LeaseThreadReply, type LeaseThreadRequest } from './thread.js';

const data = workerData as LeaseThreadData;
const port = parentPort;
if (port === null) throw new Error('lease thread: not started as a worker thread');
const counts = new Int32Array(data.renewals);
const config = new KubeConfig();
config.loadFromString(data.kubeconfig);
const clients = kubeClientsFrom(config, 'kubeconfig', data.nodes);
const controllers = new Map<number, Promise<LeaseController>>();
const reply = (message: LeaseThreadReply): void => port.postMessage(message);
const log = (line: string): void => reply({ type: 'log', line });

port.on('message', (request: LeaseThreadRequest) => {
  if (request.type === 'start') {
    const { slot, name, uid } = request;
    const started = startLeaseController({
      coordination: clients.heartbeat.coordination,
      name,
      uid,
      clock: realClock,
      log,
      onRenewed: (r) => {
        Atomics.store(counts, slot * SLOT_INTS, r.count);
        // Whole ms; a gap past int32 (24 days) is pinned there.
        Atomics.store(counts, slot * SLOT_INTS + 1, Math.min(Math.round(r.longestGapMs), 2 ** 31 - 1));
      },
    });
    controllers.set(slot, started);
    void started.then(() => reply({ type: 'started', slot }));
  } else {
    const controller = controllers.get(request.slot);
    controllers.delete(request.slot);
    void controller?.then((c) => c.close());
  }
});
