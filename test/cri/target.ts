/**
 * A container runtime the shared conformance scenarios run against (probe-scenarios.ts,
 * runtime-scenarios.ts): the CRI runtime on containerd here, the Docker runtime on a Docker
 * daemon in test/docker. What differs between them is said here, once; the test bodies are
 * the same.
 */
import { readFileSync } from 'node:fs';
import { createCriClient } from '../../src/runtime/cri/client.js';
import { CRI_ENDPOINT, describeCri, startCriKubelet, stopRuntimeKubelets, type RuntimeHarness } from './helpers.js';

export interface RuntimeTarget {
  /** `cri`, `docker`: prefixes the suites' names. */
  name: string;
  /** `describe` when the runtime is there, else skipped (or failing under its PROBELET_REQUIRE_* variable). */
  describe(name: string, body: () => void): void;
  start(testId: string): Promise<RuntimeHarness>;
  stop(testId: string): Promise<void>;
  /** The container ID's scheme in pod statuses (`containerd://`, `docker://`). */
  idScheme: string;
  /**
   * Words of the pull failure's hint that name how to get an image into this runtime, when its
   * `Failed` event carries one (the CRI runtime's carries the runtime's words only, as the kubelet's).
   */
  importHint?: string;
  /** A log file's lines as `<stream> <text>` (CRI) or `<text>` (raw), sorted. */
  logLines(file: string): string[];
  /** How a line `text` of `stream` reads in {@link logLines}. */
  logLine(stream: 'stdout' | 'stderr', text: string): string;
  /** Stops and removes a running container behind the kubelet's back (its ID without the scheme). */
  removeBehindBack(id: string): Promise<void>;
}

export const criTarget: RuntimeTarget = {
  name: 'cri',
  describe: (name, body) => describeCri(name, body),
  start: startCriKubelet,
  stop: stopRuntimeKubelets,
  idScheme: 'containerd://',
  logLines: (file) => readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => l.replace(/^\S+ /, '')).sort(),
  logLine: (stream, text) => `${stream} F ${text}`,
  removeBehindBack: async (id) => {
    const client = createCriClient(CRI_ENDPOINT);
    try {
      await client.StopContainer({ container_id: id, timeout: 0 });
      await client.RemoveContainer({ container_id: id });
    } finally {
      client.close();
    }
  },
};
