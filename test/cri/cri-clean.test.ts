/**
 * scripts/cri-clean.mjs (what `npm run cri:down` removes through the CRI) against a CRI
 * runtime service on a unix socket (a gRPC server of the test's own, the seam the kubelet's
 * own tests fake) whose first sandbox refuses its stop as containerd did when the sandbox's
 * netns was mounted twice. Every other sandbox is still stopped and removed, and the one that
 * could not be is named: one failure never leaves the rest behind (it once left 54 netns).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/cri-clean.mjs', import.meta.url));
const PROTO = fileURLToPath(new URL('../../src/runtime/cri/cri.proto', import.meta.url));
const BUSY = 'failed to check network namespace closed: remove netns: unlinkat /var/run/netns/cni-98d1e3f9-3f30-32b8-da9b-ffe96156c5bb: device or resource busy';

type Callback = (err: grpc.ServiceError | null, res?: object) => void;
type Call = grpc.ServerUnaryCall<{ pod_sandbox_id?: string; container_id?: string }, object>;

let server: grpc.Server | undefined;
let dir = '';
afterEach(() => {
  server?.forceShutdown();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A runtime service with `sandboxes`; the stop of those in `refuse` fails. Returns its endpoint and each call made, `<method> <id>`. */
async function runtimeService(sandboxes: string[], refuse: Set<string>): Promise<{ endpoint: string; calls: string[] }> {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true })) as unknown as {
    runtime: { v1: { RuntimeService: { service: grpc.ServiceDefinition } } };
  };
  const calls: string[] = [];
  const left = new Set(sandboxes);
  const ok = (method: string) => (call: Call, done: Callback) => {
    const id = call.request.pod_sandbox_id ?? call.request.container_id ?? '';
    calls.push(`${method} ${id}`);
    if (method === 'StopPodSandbox' && refuse.has(id)) {
      done(Object.assign(new Error(BUSY), { code: grpc.status.UNKNOWN, details: BUSY, metadata: new grpc.Metadata() }));
      return;
    }
    if (method === 'RemovePodSandbox') left.delete(id);
    done(null, {});
  };
  server = new grpc.Server();
  server.addService(pkg.runtime.v1.RuntimeService.service, {
    ListContainers: (_call: Call, done: Callback) => done(null, { containers: [] }),
    ListPodSandbox: (_call: Call, done: Callback) => done(null, { items: [...left].map((id) => ({ id })) }),
    StopPodSandbox: ok('StopPodSandbox'),
    RemovePodSandbox: ok('RemovePodSandbox'),
  });
  dir = mkdtempSync(join(tmpdir(), 'probelet-cri-clean-'));
  const endpoint = `unix://${join(dir, 'cri.sock')}`;
  await new Promise<void>((resolve, reject) => server?.bindAsync(endpoint, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  return { endpoint, calls };
}

function cleanUp(endpoint: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, endpoint], (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? -1) : 0, stderr }));
  });
}

describe('cri-clean.mjs', () => {
  it('a sandbox whose stop fails: the others are still stopped and removed, and it is named (exit 1)', async () => {
    const { endpoint, calls } = await runtimeService(['sb-1', 'sb-2', 'sb-3'], new Set(['sb-1']));
    const { code, stderr } = await cleanUp(endpoint);
    expect(calls).toEqual(['StopPodSandbox sb-1', 'StopPodSandbox sb-2', 'RemovePodSandbox sb-2', 'StopPodSandbox sb-3', 'RemovePodSandbox sb-3']);
    expect(code).toBe(1);
    expect(stderr).toContain(`cri-down: could not remove pod sandbox sb-1: ${BUSY}`);
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('nothing refused: every sandbox removed, exit 0', async () => {
    const { endpoint, calls } = await runtimeService(['sb-1', 'sb-2'], new Set());
    const { code, stderr } = await cleanUp(endpoint);
    expect(calls).toEqual(['StopPodSandbox sb-1', 'RemovePodSandbox sb-1', 'StopPodSandbox sb-2', 'RemovePodSandbox sb-2']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: 'cri-down: removed 0 container(s) and 2 pod sandbox(es) through the CRI\n' });
  });
});
