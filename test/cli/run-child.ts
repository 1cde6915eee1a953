/**
 * `probelet run` as a real child process for the run and demo tests: output watched as
 * it streams (to wait for "Ready" or for the API address), signals sent to it, and a
 * marker in its environment and in the pods' so that leak checks find every process of
 * the run, probelet's own and the containers' (whose environment the runtime builds).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterEach, beforeEach } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { podLineReader } from '../../src/cli/run/json-lines.js';
import { aliveWithMarker, eventually, killMarked, markerEnv } from '../helpers/processes.js';
import { BIN, REPO_ROOT } from './helpers.js';

export interface RunChild {
  readonly child: ChildProcess;
  readonly marker: string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (-1 when killed by a signal). */
  readonly exited: Promise<number>;
  /** Waits until `check(stdout)` holds; throws with the output so far after `timeoutMs`. */
  waitForStdout(check: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
}

/** A scratch directory per test: manifests, and TMPDIR of the child (its run directory). */
export interface Scratch {
  dir: string;
  marker: string;
  env: Record<string, string>;
  /** Writes `objects` as a multi-document YAML file and returns its path. */
  manifest(name: string, ...objects: unknown[]): string;
  /** Kills anything of the run still alive (a failed test's leftovers) and removes the directory. */
  cleanup(): void;
}

export function scratch(): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-run-test-'));
  const { marker, env } = markerEnv();
  return {
    dir,
    marker,
    env: { ...env, TMPDIR: dir },
    manifest(name, ...objects) {
      const path = join(dir, name);
      writeFileSync(path, objects.map((o) => yaml.dump(o)).join('---\n'));
      return path;
    },
    cleanup() {
      killMarked(marker);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh scratch for every test of the file: made before each, cleaned up after it (after
 * `beforeCleanup`, e.g. an unmount of something mounted in it). Returns the current one.
 */
export function scratchPerTest(beforeCleanup?: () => void): () => Scratch {
  let current: Scratch | undefined;
  beforeEach(() => {
    current = scratch();
  });
  afterEach(() => {
    try {
      beforeCleanup?.();
    } finally {
      current?.cleanup();
      current = undefined;
    }
  });
  return () => {
    if (current === undefined) throw new Error('a scratch exists only while a test runs');
    return current;
  };
}

/** The marker as a container env entry: the runtime does not pass probelet's environment on. */
export function markerVar(s: Scratch): { name: string; value: string } {
  return { name: 'PROBELET_TEST_MARKER', value: s.marker };
}

export function startRun(s: Scratch, args: string[]): RunChild {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { cwd: REPO_ROOT, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = once(child, 'close').then(([code]) => (typeof code === 'number' ? code : -1));
  return {
    child,
    marker: s.marker,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async waitForStdout(check, timeoutMs = 20_000) {
      let done = false;
      void exited.then(() => (done = true));
      const ok = await eventually(() => check(stdout) || done, timeoutMs, 50);
      if (!ok || !check(stdout)) {
        throw new Error(`expected output did not appear\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
      }
    },
  };
}

/** Exit code of the run, or a failure with its output when it does not end within `timeoutMs`. */
export async function exitCode(run: RunChild, timeoutMs = 25_000): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`probelet run did not exit within ${timeoutMs} ms\n--- stdout\n${run.stdout()}\n--- stderr\n${run.stderr()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([run.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** True once no process of the run (probelet, containers, exec probes) is alive. */
export function nothingLeft(marker: string, timeoutMs = 3000): Promise<boolean> {
  return eventually(() => aliveWithMarker(marker).length === 0, timeoutMs);
}

/** A pod whose container runs `command` (tagged with the marker) with `containerExtra` merged in. */
export function testPod(s: Scratch, name: string, command: string[], containerExtra: Record<string, unknown> = {}, specExtra: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 5,
      ...specExtra,
      containers: [{ name: 'main', image: 'busybox', command, env: [markerVar(s)], ...containerExtra }],
    },
  };
}

/** One line of `probelet run -o json`, as far as the tests read it (`pod` as on `pod` lines; `runPods` reads `containerStatus` lines too). */
export interface RunLine {
  type: string;
  runDir?: string;
  event?: { type?: string; reason?: string; message?: string };
  pod?: { status?: { containerStatuses?: { restartCount: number; state?: { running?: unknown } }[] } };
}

/** The JSON lines of `probelet run -o json` output (other lines, e.g. a partial last one, passed over). */
export function runLines(stdout: string): RunLine[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as RunLine);
}

/** The first pod the JSON output shows Ready. */
export function readyPod(stdout: string): Pod | undefined {
  return runPods(stdout).find((pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

/** The pod at every change, rebuilt from the `pod` and `containerStatus` lines of `probelet run -o json`. */
export function runPods(stdout: string): Pod[] {
  const read = podLineReader();
  return runLines(stdout).flatMap((line) => read(line) ?? []);
}
