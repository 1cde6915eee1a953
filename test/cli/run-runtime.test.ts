/**
 * `probelet run --runtime process|cri [--cri-endpoint]`: endpoint resolution as crictl does
 * it, usage errors (exit 2) that name the flag or the fix, and admission that asks for
 * `command` only when the runtime runs commands rather than images.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { criEndpoint } from '../../src/cli/run/runtime.js';
import { runCli } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function manifest(text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-runtime-flag-'));
  dirs.push(dir);
  const file = join(dir, 'pod.yaml');
  writeFileSync(file, text);
  return { dir, file };
}

const IMAGE_ONLY = `apiVersion: v1
kind: Pod
metadata: {name: img}
spec:
  containers: [{name: c, image: busybox:1.36}]
`;

describe('probelet run --runtime', () => {
  it('the endpoint: --cri-endpoint, else CONTAINER_RUNTIME_ENDPOINT, else containerd’s socket; a bare path is a unix socket', () => {
    expect(criEndpoint(undefined, {})).toBe('unix:///run/containerd/containerd.sock');
    expect(criEndpoint(undefined, { CONTAINER_RUNTIME_ENDPOINT: 'unix:///var/run/crio/crio.sock' })).toBe('unix:///var/run/crio/crio.sock');
    expect(criEndpoint('/tmp/x.sock', { CONTAINER_RUNTIME_ENDPOINT: 'unix:///other' })).toBe('unix:///tmp/x.sock');
    expect(() => criEndpoint('tcp://1.2.3.4:1', {})).toThrow('--cri-endpoint: expected unix:///path/to/socket');
    expect(() => criEndpoint(undefined, { CONTAINER_RUNTIME_ENDPOINT: 'npipe://x' })).toThrow('CONTAINER_RUNTIME_ENDPOINT: expected');
  });

  it('a container without command: refused by the process runtime (exit 2, the field named)', async () => {
    const { file } = manifest(IMAGE_ONLY);
    const res = await runCli(['run', file, '--listen', '127.0.0.1:0']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('spec.containers[0].command: Required value');
  });

  it('--runtime cri with no socket at the endpoint: exit 2 naming the fix; the command-less pod was admitted', async () => {
    const { dir, file } = manifest(IMAGE_ONLY);
    const res = await runCli(['run', file, '--runtime', 'cri', '--cri-endpoint', `unix://${dir}/none.sock`, '--listen', '127.0.0.1:0']);
    expect(res.code).toBe(2);
    expect(res.stderr).not.toContain('command: Required value');
    expect(res.stderr).toContain(`--runtime cri: no container runtime socket at unix://${dir}/none.sock`);
    expect(res.stderr).toContain('npm run cri:up');
  });

  it('--runtime docker with no daemon at --docker-host: exit 2 naming the fix; the command-less pod was admitted', async () => {
    const { dir, file } = manifest(IMAGE_ONLY);
    const res = await runCli(['run', file, '--runtime', 'docker', '--docker-host', `unix://${dir}/none.sock`, '--listen', '127.0.0.1:0']);
    expect(res.code).toBe(2);
    expect(res.stderr).not.toContain('command: Required value');
    expect(res.stderr).toContain(`--runtime docker: no Docker daemon answers at unix://${dir}/none.sock`);
    expect(res.stderr).toContain('npm run docker:up');
  });

  it('an unknown runtime is a usage error listing the choices', async () => {
    const { file } = manifest(IMAGE_ONLY);
    const res = await runCli(['run', file, '--runtime', 'rkt']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/Allowed choices are process, cri, docker/);
  });
});
