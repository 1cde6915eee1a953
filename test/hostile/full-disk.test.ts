/**
 * A full disk under --log-dir: the container's log file stops, and before this was said
 * nowhere (exit 0, a quarter of the output in the file). Now at once a Warning event and
 * a line on stderr; the container runs on; the run exits 1 at the end. The disk is a
 * 64 KiB tmpfs (mounting needs root: skipped otherwise, with the reason in the name).
 */
import { describe, expect, it } from 'vitest';
import { exitCode, nothingLeft, runLines, runPods, startRun, testPod } from '../cli/run-child.js';
import { eventually } from '../helpers/processes.js';
import { CAN_MOUNT_TMPFS, scratchWithTmpfs, TMPFS_SKIPPED } from '../helpers/tmpfs.js';

const disks = scratchWithTmpfs();

describe.skipIf(!CAN_MOUNT_TMPFS)(`a full disk under --log-dir${TMPFS_SKIPPED}`, () => {
  it('is said at once (Warning event, stderr), the container runs on, the run exits 1', async () => {
    const s = disks.scratch();
    const disk = disks.mount('size=64k');
    // 1 MiB of output, far more than fits, then the container stays up.
    const pod = testPod(s, 'chatty', ['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" x; echo; exec sleep 300']);
    const run = startRun(s, [s.manifest('pod.yaml', pod), '--listen', '127.0.0.1:0', '--output', 'json', '--log-dir', disk]);
    await run.waitForStdout((out) => runLines(out).some((l) => l.event?.reason === 'FailedToWriteLog'));
    const warning = runLines(run.stdout()).find((l) => l.event?.reason === 'FailedToWriteLog')?.event;
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toMatch(/^Writing the container log .*\/default_chatty_[^/]*\/main\/0\.log failed: ENOSPC: no space left on device/);
    // Said on stderr too, which may arrive after the event on stdout.
    expect(await eventually(() => /probelet: chatty\/main: Writing the container log .* failed: ENOSPC.*; probelet will exit 1/.test(run.stderr()), 5000), run.stderr()).toBe(true);
    run.child.kill('SIGTERM');
    expect(await exitCode(run)).toBe(1);
    // It ran until stopped: never restarted, never exited on its own.
    const restarts = runPods(run.stdout()).flatMap((p) => p.status?.containerStatuses?.map((c) => c.restartCount) ?? []);
    expect(Math.max(...restarts)).toBe(0);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 30_000);
});
