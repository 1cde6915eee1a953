/**
 * upstream's terminationOrdering (kuberuntime_termination_order.go) on the FakeClock: a sidecar
 * waits for every regular container and for the sidecars declared after it; others wait for
 * nothing; the wait ends at the grace period.
 */
import { describe, expect, it } from 'vitest';
import { newTerminationOrdering } from '../../src/kubelet/termination-order.js';
import { FakeClock } from '../../src/util/clock.js';

const inits = [
  { name: 'init', sidecar: false },
  { name: 's1', sidecar: true },
  { name: 's2', sidecar: true },
];

describe('terminationOrdering', () => {
  it('s1 goes after the app and s2, s2 after the app; the app and a plain init container at once', async () => {
    const clock = new FakeClock(0);
    const o = newTerminationOrdering(['app'], inits, new Set(['app', 's1', 's2', 'init']), clock);
    const turns: string[] = [];
    for (const name of ['app', 'init', 's1', 's2']) void o.waitForTurn(name, 30).then((s) => turns.push(`${name} ${s}`));
    await clock.advance(0);
    expect(turns.sort()).toEqual(['app 0', 'init 0']);
    await clock.advance(4_000);
    o.containerTerminated('app');
    await clock.advance(0);
    expect(turns).toContain('s2 4');
    expect(turns.some((t) => t.startsWith('s1'))).toBe(false);
    await clock.advance(1_000);
    o.containerTerminated('s2');
    await clock.advance(0);
    expect(turns).toContain('s1 5');
  });

  it('a turn that never comes ends at the grace period; a container not running is not waited for', async () => {
    const clock = new FakeClock(0);
    const o = newTerminationOrdering(['app'], inits, new Set(['app', 's1']), clock);
    let waited: number | undefined;
    void o.waitForTurn('s1', 7).then((s) => (waited = s));
    await clock.advance(6_999);
    expect(waited).toBeUndefined();
    await clock.advance(1);
    expect(waited).toBe(7);
    expect(await o.waitForTurn('s2', 0)).toBe(0);
  });
});
