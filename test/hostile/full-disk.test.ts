/**
 * A full disk under --log-dir: the container's log file stops, and before this was said
 * nowhere (exit 0, a quarter of the output in the file). Now at once a Warning event and
 * a line on stderr; the container runs on; the run exits 1 at the end. The disk is a
 * 64 KiB tmpfs (mounting needs root: skipped otherwise, with the reason in the name).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCode, nothingLeft, runPods, scratch, startRun, testPod, type Scratch, runLines } from '../cli/run-child.js';

const root = process.getuid?.() === 0;

let s: Scratch;
let mounted: string | undefined;
beforeEach(() => {
  s = scratch();
});
afterEach(() => {
  if (mounted) execFileSync('umount', [mounted]);
  mounted = undefined;
  s.cleanup();
});

describe.skipIf(!root)(`a full disk under --log-dir${root ? '' : ' (skipped: mounting a tmpfs needs root)'}`, () => {
  it('is said at once (Warning event, stderr), the container runs on, the run exits 1', async () => {
    const disk = join(s.dir, 'disk');
    mkdirSync(disk);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]);
    mounted = disk;
    // 1 MiB of output, far more than fits, then the container stays up.
    const pod = testPod(s, 'chatty', ['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" x; echo; exec sleep 300']);
    const run = startRun(s, [s.manifest('pod.yaml', pod), '--listen', '127.0.0.1:0', '--output', 'json', '--log-dir', disk]);
    await run.waitForStdout((out) => runLines(out).some((l) => l.event?.reason === 'FailedToWriteLog'));
    const warning = runLines(run.stdout()).find((l) => l.event?.reason === 'FailedToWriteLog')?.event;
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toMatch(/^Writing the container log .*\/default_chatty_[^/]*\/main\/0\.log failed: ENOSPC: no space left on device/);
    expect(run.stderr()).toMatch(/probelet: chatty\/main: Writing the container log .* failed: ENOSPC.*; probelet will exit 1/);
    run.child.kill('SIGTERM');
    expect(await exitCode(run)).toBe(1);
    // It ran until stopped: never restarted, never exited on its own.
    const restarts = runPods(run.stdout()).flatMap((p) => p.status?.containerStatuses?.map((c) => c.restartCount) ?? []);
    expect(Math.max(...restarts)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 30_000);
});
