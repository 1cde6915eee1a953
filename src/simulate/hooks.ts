/**
 * Lifecycle hooks on virtual time. The script language has no verdicts for hooks, so an
 * `exec` or `httpGet` hook succeeds at once (no process, no socket); a `sleep` hook takes
 * its seconds on the simulation's clock — the one that moves a kill's timing, since a
 * `preStop` uses up whole seconds of the grace period.
 */
import { createHandlerRunner, type HandlerRunner } from '../kubelet/lifecycle.js';
import type { Clock } from '../util/clock.js';

export function simulatedHandlerRunner(clock: Clock): HandlerRunner {
  const sleeps = createHandlerRunner({ execSync: () => Promise.resolve({ output: '', exitCode: 0 }), clock });
  return {
    run: (target, handler) => (handler.sleep ? sleeps.run(target, handler) : Promise.resolve(undefined)),
  };
}
