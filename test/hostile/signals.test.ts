/**
 * Every stop signal a terminal or a supervisor sends — SIGINT (Ctrl-C), SIGTERM, SIGHUP
 * (terminal closed, SSH lost), SIGQUIT (Ctrl-\) — stops the built `probelet run` cleanly:
 * every container (a process group of its own, so not reached by the signal) ends, the
 * temporary run directory is removed, exit 0. Before SIGHUP and SIGQUIT were handled, Node's
 * default action ended probelet at once and left both behind. `simulate --ui` likewise
 * closes its dashboard and exits 0.
 */
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aliveWithMarker } from '../helpers/processes.js';
import { BIN, REPO_ROOT } from '../cli/helpers.js';
import { exitCode, nothingLeft, scratch, startRun, testPod, type Scratch, runLines } from '../cli/run-child.js';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

let s: Scratch;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  s.cleanup();
});

describe.each(SIGNALS)('probelet run on %s', (signal) => {
  it('stops every container, removes the run directory and exits 0', async () => {
    // Two containers that ignore nothing: `sleep` as PID 1 of its group dies of SIGTERM.
    const file = s.manifest('pod.yaml', testPod(s, 'sig', ['sleep', '300'], {}, { terminationGracePeriodSeconds: 2 }));
    const run = startRun(s, [file, '--listen', '127.0.0.1:0', '--output', 'json']);
    await run.waitForStdout((out) => runLines(out).some((l) => l.type === 'event' && l.event?.reason === 'Started'));
    const runDir = runLines(run.stdout()).find((l) => l.type === 'run')?.runDir ?? '';
    expect(existsSync(runDir)).toBe(true);
    // The container, besides probelet itself.
    expect(aliveWithMarker(s.marker).length).toBeGreaterThanOrEqual(2);

    run.child.kill(signal);
    expect(await exitCode(run, 20_000)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
    expect(existsSync(runDir)).toBe(false);
  }, 30_000);
});

describe.each(SIGNALS)('probelet simulate --ui on %s', (signal) => {
  it('closes the dashboard and exits 0', async () => {
    const file = s.manifest('pod.yaml', testPod(s, 'sim', ['sleep', '300']));
    const child = spawn(process.execPath, [BIN, 'simulate', file, '--for', '10s', '--ui', '--listen', '127.0.0.1:0', '-o', 'json'], {
      cwd: REPO_ROOT,
      env: s.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    const closed = once(child, 'close');
    while (!stdout.includes('"type":"ui"')) {
      if (child.exitCode !== null) throw new Error(`simulate exited ${child.exitCode} before serving the dashboard`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill(signal);
    const [code, killedBy] = (await closed) as [number | null, string | null];
    expect({ code, killedBy }).toEqual({ code: 0, killedBy: null });
  }, 30_000);
});
