/**
 * A container's state as the Docker runtime reads it from the Engine API, on Docker Engine and on
 * Podman's service, whose compat answers carry Podman's own states (read from Podman 4.3.1's
 * answers: a container whose process has exited is `stopped` until Podman's cleanup of it
 * has run, then `exited`).
 */
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { engineState, fromInspect } from '../../src/runtime/docker/docker-runtime.js';

function inspected(state: Partial<Dockerode.ContainerInspectInfo['State']>): Dockerode.ContainerInspectInfo {
  return { Created: '2026-11-29T06:31:13.000000000Z', State: { Status: 'running', ExitCode: 0, OOMKilled: false, Error: '', StartedAt: '2026-11-29T06:31:13.100Z', FinishedAt: '0001-01-01T00:00:00Z', ...state } } as Dockerode.ContainerInspectInfo;
}

describe('docker: engine states', () => {
  it("Podman's `stopped` (exited, its cleanup pending) is exited with its exit code and reason; `stopping` is still running", () => {
    expect(fromInspect(inspected({ Status: 'stopped', ExitCode: 0, FinishedAt: '2026-11-29T06:31:13.136Z' }))).toMatchObject({ state: 'exited', exitCode: 0, reason: 'Completed', finishedAt: Date.parse('2026-11-29T06:31:13.136Z') });
    expect(fromInspect(inspected({ Status: 'stopped', ExitCode: 137, FinishedAt: '2026-11-29T06:31:13.136Z' }))).toMatchObject({ state: 'exited', exitCode: 137, reason: 'Error' });
    expect(fromInspect(inspected({ Status: 'stopping' })).state).toBe('running');
  });

  it("Docker's states: created, running (paused, restarting), exited (dead); anything else unknown", () => {
    expect(['created', 'running', 'paused', 'restarting', 'exited', 'dead', 'removing', undefined].map(engineState)).toEqual(['created', 'running', 'running', 'running', 'exited', 'exited', 'unknown', 'unknown']);
  });
});
