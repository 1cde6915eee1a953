/**
 * Harness of the Docker tests: the real kubelet over the Docker runtime on a real daemon
 * (`npm run docker:up` starts a private one at /tmp/probelet-docker/docker.sock; set
 * PROBELET_DOCKER_HOST or DOCKER_HOST for another, e.g. Podman's service), with the busybox
 * test image. Without a daemon (or without root) the suites are skipped with that reason in
 * their name; with PROBELET_REQUIRE_DOCKER=1 (set by .ci/run) they fail instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import Docker from 'dockerode';
import { RUN_LABEL } from '../../src/runtime/cri/pod-config.js';
import { parseDockerHost } from '../../src/runtime/docker/docker-host.js';
import { createDockerRuntime } from '../../src/runtime/docker/docker-runtime.js';
import type { VolumePolicy } from '../../src/runtime/docker/volumes.js';
import { describeWhen, startRuntimeKubelet, stopRuntimeKubelets, type RuntimeHarness } from '../cri/helpers.js';
import type { RuntimeTarget } from '../cri/target.js';

export const DOCKER_HOST = process.env.PROBELET_DOCKER_HOST ?? process.env.DOCKER_HOST ?? 'unix:///tmp/probelet-docker/docker.sock';
export const DOCKER_CONNECTION = parseDockerHost(DOCKER_HOST, 'DOCKER_HOST');

/** Why the Docker tests cannot run here, or undefined when they can. */
export function dockerUnavailable(): string | undefined {
  if ('socketPath' in DOCKER_CONNECTION) {
    if (process.getuid?.() !== 0) return 'not root (the tests read container processes in /proc)';
    if (!existsSync(DOCKER_CONNECTION.socketPath)) return `no Docker daemon at ${DOCKER_HOST} (run \`npm run docker:up\` as root)`;
  }
  return undefined;
}

export function describeDocker(name: string, body: () => void): void {
  describeWhen(name, body, dockerUnavailable(), 'PROBELET_REQUIRE_DOCKER', 'a Docker daemon');
}

export function dockerClient(): Docker {
  return new Docker(DOCKER_CONNECTION);
}

/** Containers and volumes carrying `label=value` (the run's label by default), as the daemon lists them. */
export async function leftInDaemon(value: string, label: string = RUN_LABEL): Promise<string[]> {
  const docker = dockerClient();
  const filters = { label: [`${label}=${value}`] };
  const containers = await docker.listContainers({ all: true, filters });
  const { Volumes } = await docker.listVolumes({ filters });
  return [...containers.map((c) => `container ${c.Names.join(',')}`), ...(Volumes ?? []).map((v) => `volume ${v.Name}`)];
}

/** A kubelet over a fresh Docker runtime, closed by stopRuntimeKubelets(testId). */
export function startDockerKubelet(testId: string, volumes?: VolumePolicy): Promise<RuntimeHarness> {
  return startRuntimeKubelet(testId, (runDir) => createDockerRuntime({ connection: DOCKER_CONNECTION, runDir, ...(volumes ? { volumes } : {}) }), (runID) => leftInDaemon(runID), 'the Docker daemon');
}

export const dockerTarget: RuntimeTarget = {
  name: 'docker',
  describe: describeDocker,
  start: (testId) => startDockerKubelet(testId),
  stop: stopRuntimeKubelets,
  idScheme: 'docker://',
  importHint: 'docker load',
  logLines: (file) => readFileSync(file, 'utf8').trimEnd().split('\n').sort(),
  logLine: (_stream, text) => text,
  removeBehindBack: async (id) => {
    await dockerClient().getContainer(id).remove({ force: true });
  },
};
