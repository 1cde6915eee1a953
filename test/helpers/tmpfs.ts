/**
 * A small tmpfs in a test's scratch directory, for what a full filesystem does to a run (no
 * space left, no inodes left). Mounting needs root: {@link TMPFS_SKIPPED} is the reason to
 * put in the name of a suite skipped without it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { scratchPerTest, type Scratch } from '../cli/run-child.js';

export const CAN_MOUNT_TMPFS = process.getuid?.() === 0;
export const TMPFS_SKIPPED = CAN_MOUNT_TMPFS ? '' : ' (skipped: mounting a tmpfs needs root)';

/**
 * A scratch per test (see `scratchPerTest`) and `mount(options)`, which mounts a tmpfs with
 * those options (`size=64k`, `nr_inodes=8`) at `disk` in it; unmounted before the scratch is removed.
 */
export function scratchWithTmpfs(): { scratch: () => Scratch; mount(options: string): string } {
  let mounted: string | undefined;
  const current = scratchPerTest(() => {
    if (mounted) execFileSync('umount', [mounted]);
    mounted = undefined;
  });
  return {
    scratch: current,
    mount(options) {
      const disk = join(current().dir, 'disk');
      mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', disk]);
      mounted = disk;
      return disk;
    },
  };
}
