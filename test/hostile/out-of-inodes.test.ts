/**
 * A --log-dir out of inodes: a container's log directory cannot be made, and the start
 * failure said `ENOENT: no such file or directory` (Node's recursive mkdir reports the stat
 * of the directory it failed to make, not its error), sending the user to look for a missing
 * path on a full filesystem (issue 33). Now the error is the one that happened, ENOSPC. The
 * filesystem is a tmpfs of 8 inodes (mounting needs root: skipped otherwise, with the reason
 * in the name).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCode, nothingLeft, runLines, startRun, testPod } from '../cli/run-child.js';
import { CAN_MOUNT_TMPFS, scratchWithTmpfs, TMPFS_SKIPPED } from '../helpers/tmpfs.js';

const disks = scratchWithTmpfs();

describe.skipIf(!CAN_MOUNT_TMPFS)(`a --log-dir out of inodes${TMPFS_SKIPPED}`, () => {
  it('fails the container start with ENOSPC, not ENOENT', async () => {
    const s = disks.scratch();
    const disk = disks.mount('size=1m,nr_inodes=8');
    // Fill the inodes but one (the root takes one): the pod's directory is made, its container's is not.
    for (let i = 0; i < 6; i++) mkdirSync(join(disk, `full${i}`));
    const pod = testPod(s, 'inodes', ['sleep', '300']);
    const run = startRun(s, [s.manifest('pod.yaml', pod), '--listen', '127.0.0.1:0', '--output', 'json', '--log-dir', disk]);
    const failed = (out: string): string | undefined => runLines(out).find((l) => l.event?.reason === 'Failed')?.event?.message;
    await run.waitForStdout((out) => failed(out) !== undefined);
    expect(failed(run.stdout())).toMatch(/^Error: failed to create container log file: ENOSPC: no space left on device, mkdir '.*\/default_inodes_[^/]*\/main'$/);
    run.child.kill('SIGTERM');
    await exitCode(run);
    expect(await nothingLeft(s.marker)).toBe(true);
  }, 30_000);
});
