/**
 * When the leader exits, what is left of its tree dies — also when its process group is
 * already empty and what is left only shares its session (the case the cheap "anything
 * left?" check must not miss), and after many runs in a row.
 */
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/spawn/index.js';
import { aliveWithMarker, eventually, useProcessMarkers } from '../helpers/processes.js';
import { PRIMITIVES, usePrimitive } from '../helpers/primitive.js';

const tagged = useProcessMarkers();

describe.each(PRIMITIVES)('leftovers after the leader exits (%s spawn)', (primitive) => {
  usePrimitive(primitive);

  it('a process that moved to another group of the session, the group itself empty', async () => {
    const { marker, env } = tagged();
    const run = await runProcess({
      // The leader exits at once; only the re-grouped sleep (in the session) is left.
      argv: ['sh', '-c', 'perl -e "setpgrp(0,0); exec qw(sleep 30)" >/dev/null 2>&1 & sleep 0.2'],
      env,
      timeoutMs: 20_000,
    });
    expect(run).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('a re-grouped process started after a hundred short-lived ones, and its own child', async () => {
    const { marker, env } = tagged();
    const run = await runProcess({
      argv: [
        'sh',
        '-c',
        'i=0; while [ $i -lt 100 ]; do true & i=$((i+1)); done; wait; perl -e "setpgrp(0,0); fork or exec qw(sleep 30); exec qw(sleep 30)" >/dev/null 2>&1 & sleep 0.2',
      ],
      env,
      timeoutMs: 20_000,
    });
    expect(run).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(await eventually(() => aliveWithMarker(marker).length === 0, 1000)).toBe(true);
  });

  it('nothing left: many runs in a row, each leaving nothing behind', async () => {
    const { marker, env } = tagged();
    for (let i = 0; i < 20; i++) {
      const run = await runProcess({ argv: ['sh', '-c', 'echo $$'], env, timeoutMs: 5_000 });
      expect(run.exitCode).toBe(0);
    }
    expect(aliveWithMarker(marker)).toEqual([]);
  });
});
