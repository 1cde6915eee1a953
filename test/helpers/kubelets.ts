import { afterEach } from 'vitest';
import type { Kubelet } from '../../src/kubelet/kubelet.js';
import type { FakeClock } from '../../src/util/clock.js';

/**
 * A list of kubelets (on FakeClocks) that are closed after each test. `close()` waits out
 * the pods' grace periods on the kubelet's clock, so the clock is moved on while it does.
 */
export function closeKubeletsAfterEach(): Kubelet[] {
  const kubelets: Kubelet[] = [];
  afterEach(async () => {
    for (const k of kubelets.splice(0)) {
      const closing = k.close();
      await (k.clock as FakeClock).advance(600_000);
      await closing;
    }
  });
  return kubelets;
}
