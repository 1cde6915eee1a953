// A ProbeManager over an in-memory StatusManager: add a pod, watch its readiness change.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalCommandRunner, ProbeManager, ResultsManager, StatusManager } from 'probelet';

const readyFile = join(mkdtempSync(join(tmpdir(), 'probelet-example-')), 'ready');
const pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'web-uid' },
  spec: { containers: [{ name: 'app',
    readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1, failureThreshold: 1 } }] },
};

// The status the kubelet generated: the container runs and has started.
const statusManager = new StatusManager();
statusManager.setPodStatus(pod, { phase: 'Running', podIP: '127.0.0.1', containerStatuses: [{
  name: 'app', containerID: 'local://app-1', image: 'app', imageID: '', ready: false, started: true,
  restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } }] });
statusManager.subscribe((uid, status) => {
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  console.log(`pod ${uid}: Ready=${ready?.status}${ready?.reason ? ` (${ready.reason})` : ''}`);
});

// Readiness results feed the status manager, as the kubelet's sync loop does.
const readinessResults = new ResultsManager();
readinessResults.subscribe((u) => statusManager.setContainerReadiness(u.podUID, u.containerID, u.result === 'success'));
const manager = new ProbeManager({
  statusProvider: statusManager, readinessResults,
  livenessResults: new ResultsManager(), startupResults: new ResultsManager(),
  runner: new LocalCommandRunner(), // how exec probes run; a CRI client in a real node agent
});
manager.addPod(pod); // one worker per container probe

await sleep(1500);
writeFileSync(readyFile, 'ok'); // the app becomes ready…
await sleep(1500);
rmSync(readyFile); // …and stops being ready
await sleep(1500);
await manager.close(); // stops every worker and waits for them
rmSync(join(readyFile, '..'), { recursive: true });
