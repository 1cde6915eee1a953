/**
 * `probelet run --runtime process|cri|docker [--cri-endpoint unix:///…] [--docker-host …]`:
 * which container runtime the local kubelet drives. The CRI endpoint comes from the flag, else
 * `CONTAINER_RUNTIME_ENDPOINT` (as crictl reads it), else containerd's default socket; the
 * Docker host from the flag, else `DOCKER_HOST`, else Docker's default socket.
 */
import { DEFAULT_CRI_ENDPOINT, createCriRuntime } from '../../runtime/cri/cri-runtime.js';
import { containerRecordPath } from '../../runtime/process-owner.js';
import { createProcessRuntime, type ProcessRuntimeOptions } from '../../runtime/process-runtime.js';
import type { ContainerRuntime } from '../../runtime/types.js';
import { dockerHost, parseDockerHost } from '../../runtime/docker/docker-host.js';
import type { VolumePolicy } from '../../runtime/docker/volumes.js';
import { CliUsageError } from '../io.js';

export const RUNTIME_NAMES = ['process', 'cri', 'docker'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

export interface RuntimeFlags {
  runtime?: RuntimeName;
  criEndpoint?: string;
  dockerHost?: string;
  /** `--allow-host-path`: the Docker runtime bind-mounts hostPath volumes. */
  allowHostPath?: boolean;
}

/** The CRI endpoint to use; bad values are usage errors naming the flag. */
export function criEndpoint(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const source = flag !== undefined ? '--cri-endpoint' : 'CONTAINER_RUNTIME_ENDPOINT';
  const value = (flag ?? env.CONTAINER_RUNTIME_ENDPOINT ?? '').trim() || DEFAULT_CRI_ENDPOINT;
  if (value.startsWith('unix://') && value.length > 'unix://'.length) return value;
  if (value.startsWith('/')) return `unix://${value}`;
  throw new CliUsageError(`${source}: expected unix:///path/to/socket (e.g. ${DEFAULT_CRI_ENDPOINT}), got ${JSON.stringify(value)}`);
}

/** Does this runtime run images (so `command` may be left to the image's ENTRYPOINT)? */
export function runsImages(flags: RuntimeFlags): boolean {
  return flags.runtime === 'cri' || flags.runtime === 'docker';
}

/**
 * Creates the runtime; a CRI or Docker runtime that cannot be reached is an error that says
 * what to do. `node` (probelet node) labels the CRI or Docker runtime's sandboxes and
 * containers with the node's name (and has it keep what a killed earlier run of that node
 * left, for adoption), or has the process runtime record its containers under it
 * (process-owner.ts).
 */
export async function createRuntime(
  flags: RuntimeFlags,
  runDir: string,
  options: Pick<ProcessRuntimeOptions, 'onLogWriteError'> & { node?: string; relistPhaseMs?: number; volumes?: VolumePolicy } = {},
): Promise<ContainerRuntime> {
  const { node, relistPhaseMs, volumes, ...hooks } = options;
  if (flags.runtime === 'docker') {
    const host = dockerHost(flags.dockerHost);
    try {
      // Loaded here: a run without Docker never loads dockerode.
      const { createDockerRuntime } = await import('../../runtime/docker/docker-runtime.js');
      return await createDockerRuntime({
        connection: parseDockerHost(host.value, host.source),
        runDir,
        warn: (message) => process.stderr.write(`probelet: ${message}\n`),
        ...hooks,
        ...(node !== undefined ? { node, adopt: true } : {}),
        ...(relistPhaseMs !== undefined ? { relistPhaseMs } : {}),
        volumes: { ...volumes, allowHostPath: flags.allowHostPath === true },
      });
    } catch (err) {
      throw new CliUsageError(`--runtime docker: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (flags.runtime !== 'cri') return createProcessRuntime({ runDir, ...hooks, ...(node !== undefined ? { containerRecord: containerRecordPath(node) } : {}) });
  const endpoint = criEndpoint(flags.criEndpoint);
  try {
    return await createCriRuntime({
      endpoint,
      runDir,
      warn: (message) => process.stderr.write(`probelet: ${message}\n`),
      ...(node !== undefined ? { node, adopt: true } : {}),
      ...(relistPhaseMs !== undefined ? { relistPhaseMs } : {}),
    });
  } catch (err) {
    throw new CliUsageError(`--runtime cri: ${err instanceof Error ? err.message : String(err)}`);
  }
}
