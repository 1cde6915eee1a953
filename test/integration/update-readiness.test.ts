import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { StatusManager } from '../../src/kubelet/status-manager.js';
import { LocalCommandRunner } from '../../src/probe/local-runner.js';
import { ProbeManager } from '../../src/prober/manager.js';
import { ResultsManager } from '../../src/prober/results.js';
import { realClock } from '../../src/util/clock.js';

/**
 * T12 TestUpdateReadiness, end to end: the real Prober running a real command through a
 * LocalCommandRunner, the in-memory StatusManager, and a loop applying readiness updates
 * to it the way the kubelet's sync loop does.
 */
describe('T12 readiness reaches the status manager (real prober, real process)', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('becomes ready when the exec probe succeeds and unready when it fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-t12-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const flag = join(dir, 'ready');
    const containerID = 'test://cOnTaInEr_Id';
    const pod: Pod = {
      metadata: { name: 'testPod', namespace: 'default', uid: 'pOd_UiD' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'cOnTaInEr_NaMe',
            readinessProbe: { exec: { command: ['sh', '-c', `test -f ${flag}`] }, timeoutSeconds: 1, periodSeconds: 1, successThreshold: 1, failureThreshold: 1 },
          },
        ],
      },
    };
    const statusManager = new StatusManager();
    statusManager.setPodStatus(pod, {
      phase: 'Running',
      podIP: '127.0.0.1',
      containerStatuses: [
        {
          name: 'cOnTaInEr_NaMe',
          containerID,
          image: 'img',
          imageID: '',
          ready: false,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: new Date(realClock.now() - 60_000).toISOString() } },
        },
      ],
    });
    const readinessResults = new ResultsManager();
    const unsubscribe = readinessResults.subscribe((u) =>
      statusManager.setContainerReadiness(u.podUID, u.containerID, u.result === 'success'),
    );
    const manager = new ProbeManager({
      statusProvider: statusManager,
      livenessResults: new ResultsManager(),
      readinessResults,
      startupResults: new ResultsManager(),
      runner: new LocalCommandRunner(),
    });
    cleanups.push(async () => {
      unsubscribe();
      await manager.close();
    });
    const ready = (): boolean | undefined => statusManager.getPodStatus('pOd_UiD')?.containerStatuses?.[0]?.ready;

    manager.addPod(pod);
    expect(manager.workerCount()).toBe(1);
    expect(manager.getWorker('pOd_UiD', 'cOnTaInEr_NaMe', 'readiness')).toBeDefined();

    writeFileSync(flag, 'ok');
    await vi.waitFor(() => expect(ready()).toBe(true), { timeout: 10_000, interval: 50 });
    expect(statusManager.getPodStatus('pOd_UiD')?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    rmSync(flag);
    await vi.waitFor(() => expect(ready()).toBe(false), { timeout: 10_000, interval: 50 });
    expect(statusManager.getPodStatus('pOd_UiD')?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
  });
});
