/**
 * Many trees terminated in one turn of the event loop share one read of the process table
 * (deleting 1,000 pods read all of /proc 1,000 times before). What must hold all the same:
 * every tree's descendants get the SIGTERM, also those that left for a session of their own
 * (found only through /proc's parent links).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnGroup } from '../../src/spawn/index.js';
import { aliveWithMarker, eventually, useProcessMarkers } from '../helpers/processes.js';
import { PRIMITIVES, usePrimitive } from '../helpers/primitive.js';

const tagged = useProcessMarkers();
const TREES = 20;

describe.each(PRIMITIVES)('terminating many process trees at once (%s spawn)', (primitive) => {
  usePrimitive(primitive);

  it('reaches every setsid descendant of every tree with SIGTERM', async () => {
    const { marker, env } = tagged();
    const dir = mkdtempSync(join(tmpdir(), 'probelet-terms-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'terms');
    // The descendant in its own session notes its SIGTERM; the leader ignores SIGTERM (so does
    // its sleep) and exits a second later, after which whatever is left would get SIGKILL.
    const script = `setsid sh -c 'trap "echo \\$\\$ >> ${file}; exit 0" TERM; sleep 30 & wait' & sleep 0.3; trap "" TERM; sleep 1`;
    const groups = await Promise.all(Array.from({ length: TREES }, () => spawnGroup({ argv: ['sh', '-c', script], env })));
    await new Promise((resolve) => setTimeout(resolve, 500)); // every descendant has set its trap
    const exits = await Promise.all(groups.map((g) => g.terminate(5000)));
    expect(exits.map((e) => e.exitCode)).toEqual(Array.from({ length: TREES }, () => 0));
    // Each descendant notes its pid on SIGTERM (a TERM arriving again while the trap runs may note it twice).
    expect(new Set(readFileSync(file, 'utf8').trim().split('\n')).size).toBe(TREES);
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 2000)).toBe(true);
  });

  it('when many leaders exit together, what each left in its session (another group) is killed', async () => {
    const { marker, env } = tagged();
    // A sleep that moved to a process group of its own stays in the leader's session: only
    // the exit-time check (which shares /proc reads within a turn) can find it.
    const script = 'perl -e "setpgrp(0,0); exec qw(sleep 30)" >/dev/null 2>&1 & sleep 0.5';
    const groups = await Promise.all(Array.from({ length: TREES }, () => spawnGroup({ argv: ['sh', '-c', script], env })));
    const exits = await Promise.all(groups.map((g) => g.exited));
    expect(exits.map((e) => e.exitCode)).toEqual(Array.from({ length: TREES }, () => 0));
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 2000)).toBe(true);
  });
});
