/**
 * The CRI runtime on a real containerd: the shared runtime scenarios (runtime-scenarios.ts),
 * then what only the CRI runtime has: leftovers of a crashed run found by sandbox labels, and
 * errors that name the fix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect, it } from 'vitest';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { createCriRuntime } from '../../src/runtime/cri/cri-runtime.js';
import { MANAGED_LABEL, PID_LABEL, PID_START_LABEL, RUN_LABEL, processStartTime } from '../../src/runtime/cri/pod-config.js';
import { BUSYBOX, CRI_ENDPOINT, describeCri } from './helpers.js';
import { runtimeScenarios } from './runtime-scenarios.js';
import { criTarget } from './target.js';

runtimeScenarios(criTarget);

describeCri('cri: the runtime on containerd', () => {
  it('removes the sandboxes of a crashed run (its probelet process is gone, or its PID reused) at start, and leaves a live run alone', async () => {
    const client = createCriClient(CRI_ENDPOINT);
    const dead = spawn('true');
    await once(dead, 'exit');
    const config = (name: string, pid: number, pidStart?: string) => ({
      metadata: { name, uid: `uid-${name}-${Date.now()}`, namespace: 'default', attempt: 0 },
      log_directory: '',
      labels: { [MANAGED_LABEL]: 'true', [RUN_LABEL]: `test-${name}`, [PID_LABEL]: String(pid), ...(pidStart !== undefined ? { [PID_START_LABEL]: pidStart } : {}) },
      annotations: {},
      linux: { security_context: { namespace_options: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const } } },
    });
    const crashed = await client.RunPodSandbox({ config: config('crashed', dead.pid ?? 0) });
    const live = await client.RunPodSandbox({ config: config('live', process.pid, processStartTime(process.pid)) });
    // A crashed run whose PID now belongs to another process (ours, started later than it says).
    const reused = await client.RunPodSandbox({ config: config('reused', process.pid, '1') });
    const runDir = mkdtempSync(join(tmpdir(), 'probelet-cri-'));
    try {
      const runtime = await createCriRuntime({ endpoint: CRI_ENDPOINT, runDir });
      await runtime.close();
      const { items } = await client.ListPodSandbox({ filter: { label_selector: { [MANAGED_LABEL]: 'true' } } });
      const ids = items.map((s) => s.id);
      expect(ids).not.toContain(crashed.pod_sandbox_id);
      expect(ids).not.toContain(reused.pod_sandbox_id);
      expect(ids).toContain(live.pod_sandbox_id);
    } finally {
      for (const id of [crashed.pod_sandbox_id, reused.pod_sandbox_id, live.pod_sandbox_id]) {
        await client.StopPodSandbox({ pod_sandbox_id: id }).catch(() => undefined);
        await client.RemovePodSandbox({ pod_sandbox_id: id }).catch(() => undefined);
      }
      client.close();
      rmSync(runDir, { recursive: true, force: true });
    }
  });

  it('errors name the fix: no socket at the endpoint; a containerd without its CRI plugin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-cri-err-'));
    const runDir = join(dir, 'pods');
    try {
      await expect(createCriRuntime({ endpoint: `unix://${dir}/none.sock`, runDir })).rejects.toThrow(
        /no container runtime socket at unix:\/\/.*none\.sock: .*npm run cri:up.*--cri-endpoint/,
      );
      // A real gRPC server that serves no CRI, like Docker's containerd with disabled_plugins = ["cri"].
      const server = new grpc.Server();
      const sock = join(dir, 'nocri.sock');
      await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
      try {
        await expect(createCriRuntime({ endpoint: `unix://${sock}`, runDir })).rejects.toThrow(/does not serve the CRI.*disabled_plugins = \["cri"\]/);
      } finally {
        server.forceShutdown();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(existsSync(dir)).toBe(false);
    expect(BUSYBOX).toBe('probelet.local/busybox:test');
  });
});
