/**
 * Harness of the Docker tests: the real kubelet over the Docker runtime on a real daemon
 * (`npm run docker:up` starts a private one at /tmp/probelet-docker/docker.sock; set
 * PROBELET_DOCKER_HOST or DOCKER_HOST for another), with the busybox test image; and the same
 * on Podman's Docker-compatible service (`npm run docker:up -- --podman`, at
 * /tmp/probelet-podman/podman.sock, or PROBELET_PODMAN_HOST). Without a daemon (or without
 * root) the suites are skipped with that reason in their name; with PROBELET_REQUIRE_DOCKER=1
 * (set by .ci/run) or PROBELET_REQUIRE_PODMAN=1 they fail instead.
 */
import { existsSync } from 'node:fs';
import Docker from 'dockerode';
import type { KubeletOptions } from '../../src/kubelet/kubelet.js';
import { RUN_LABEL } from '../../src/runtime/cri/pod-config.js';
import { parseDockerHost, type DockerConnection } from '../../src/runtime/docker/docker-host.js';
import { createDockerRuntime } from '../../src/runtime/docker/docker-runtime.js';
import type { VolumePolicy } from '../../src/runtime/docker/volumes.js';
import { describeWhen, startRuntimeKubelet, stopRuntimeKubelets, type RuntimeHarness } from '../cri/helpers.js';
import { criTarget, type RuntimeTarget } from '../cri/target.js';

export const DOCKER_HOST = process.env.PROBELET_DOCKER_HOST ?? process.env.DOCKER_HOST ?? 'unix:///tmp/probelet-docker/docker.sock';
export const DOCKER_CONNECTION = parseDockerHost(DOCKER_HOST, 'DOCKER_HOST');
export const PODMAN_HOST = process.env.PROBELET_PODMAN_HOST ?? 'unix:///tmp/probelet-podman/podman.sock';
export const PODMAN_CONNECTION = parseDockerHost(PODMAN_HOST, 'PROBELET_PODMAN_HOST');

/** Why the tests cannot use the daemon at `connection` here, or undefined when they can. */
function daemonUnavailable(connection: DockerConnection, host: string, upCommand: string): string | undefined {
  if ('socketPath' in connection) {
    if (process.getuid?.() !== 0) return 'not root (the tests read container processes in /proc)';
    if (!existsSync(connection.socketPath)) return `no daemon at ${host} (run \`${upCommand}\` as root)`;
  }
  return undefined;
}

/** Why the Docker tests cannot run here, or undefined when they can. */
export function dockerUnavailable(): string | undefined {
  return daemonUnavailable(DOCKER_CONNECTION, DOCKER_HOST, 'npm run docker:up');
}

export function describeDocker(name: string, body: () => void): void {
  describeWhen(name, body, dockerUnavailable(), 'PROBELET_REQUIRE_DOCKER', 'a Docker daemon');
}

export function dockerClient(connection: DockerConnection = DOCKER_CONNECTION): Docker {
  return new Docker(connection);
}

/** Containers and volumes carrying `label=value` (the run's label by default), as the daemon lists them. */
export async function leftInDaemon(value: string, label: string = RUN_LABEL, connection: DockerConnection = DOCKER_CONNECTION): Promise<string[]> {
  const docker = dockerClient(connection);
  const filters = { label: [`${label}=${value}`] };
  const containers = await docker.listContainers({ all: true, filters });
  const { Volumes } = await docker.listVolumes({ filters });
  return [...containers.map((c) => `container ${c.Names.join(',')}`), ...(Volumes ?? []).map((v) => `volume ${v.Name}`)];
}

/** A kubelet over a fresh Docker runtime, closed by stopRuntimeKubelets(testId). */
export function startDockerKubelet(
  testId: string,
  volumes?: VolumePolicy,
  connection: DockerConnection = DOCKER_CONNECTION,
  options: Omit<KubeletOptions, 'runtime'> = {},
): Promise<RuntimeHarness> {
  return startRuntimeKubelet(
    testId,
    (runDir) => createDockerRuntime({ connection, runDir, ...(volumes ? { volumes } : {}) }),
    (runID) => leftInDaemon(runID, RUN_LABEL, connection),
    'the daemon',
    options,
  );
}

/** The shared conformance scenarios' view of the Docker runtime on the daemon at `connection`. */
function daemonTarget(name: string, connection: DockerConnection, describe: RuntimeTarget['describe']): RuntimeTarget {
  return {
    name,
    describe,
    start: (testId) => startDockerKubelet(testId, undefined, connection),
    stop: stopRuntimeKubelets,
    idScheme: 'docker://',
    importHint: 'docker load',
    // The same CRI log files as containerd's (cri-log-framing.ts).
    logLines: criTarget.logLines,
    logLine: criTarget.logLine,
    removeBehindBack: async (id) => {
      await dockerClient(connection).getContainer(id).remove({ force: true });
    },
  };
}

export const dockerTarget = daemonTarget('docker', DOCKER_CONNECTION, describeDocker);

/** Podman's service: skipped with the reason in its name when podman is absent, failing instead under PROBELET_REQUIRE_PODMAN=1. */
export function describePodman(name: string, body: () => void): void {
  describeWhen(name, body, daemonUnavailable(PODMAN_CONNECTION, PODMAN_HOST, 'npm run docker:up -- --podman'), 'PROBELET_REQUIRE_PODMAN', "Podman's service");
}

export const podmanTarget = daemonTarget('podman', PODMAN_CONNECTION, describePodman);
