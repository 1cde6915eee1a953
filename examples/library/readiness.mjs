// A ProbeManager over an in-memory StatusManager: add a pod, watch its readiness change.
// Run it with `npm run -s build && node examples/library/readiness.mjs`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCommandRunner, ProbeManager, ResultsManager, StatusManager } from '../../dist/index.js';

const dir = mkdtempSync(join(tmpdir(), 'probelet-example-'));
const readyFile = join(dir, 'ready');

// 1. The pod: one container with an exec readiness probe (every second).
const pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'web-uid' },
  spec: {
    containers: [
      {
        name: 'app',
        readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1, failureThreshold: 1 },
      },
    ],
  },
};

// 2. The status the kubelet would have generated: the container runs and has started.
const statusManager = new StatusManager();
statusManager.setPodStatus(pod, {
  phase: 'Running',
  podIP: '127.0.0.1',
  containerStatuses: [
    {
      name: 'app',
      containerID: 'local://app-1',
      image: 'app',
      imageID: '',
      ready: false,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: new Date().toISOString() } },
    },
  ],
});

// 3. The manager: exec probes run as local processes; readiness results feed the status manager,
//    as the kubelet's sync loop does.
const readinessResults = new ResultsManager();
readinessResults.subscribe((u) => statusManager.setContainerReadiness(u.podUID, u.containerID, u.result === 'success'));
const manager = new ProbeManager({
  statusProvider: statusManager,
  livenessResults: new ResultsManager(),
  readinessResults,
  startupResults: new ResultsManager(),
  runner: new LocalCommandRunner(),
});
statusManager.subscribe((uid, status) => {
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  console.log(`pod ${uid}: Ready=${ready?.status}${ready?.reason ? ` (${ready.reason})` : ''}`);
});
manager.addPod(pod);

// 4. Make the app ready, then unready, and stop.
await new Promise((r) => setTimeout(r, 1500));
writeFileSync(readyFile, 'ok');
await new Promise((r) => setTimeout(r, 1500));
rmSync(readyFile);
await new Promise((r) => setTimeout(r, 1500));
await manager.close();
rmSync(dir, { recursive: true, force: true });
