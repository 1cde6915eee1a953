/**
 * The parts that make a node simulated (`probelet node --runtime simulated`, with or without
 * a fleet file): the simulator's runtime, whose containers play the behaviours each pod is
 * given, and the Prober over the simulated handlers, which answer from those scripts in the
 * real handlers' words (src/simulate/handlers.ts). One place, used by the command on the
 * real clock and by the tests on a FakeClock.
 */
import type { Pod } from '../../api/types.js';
import type { NodeAgentOptions } from '../agent.js';
import { Prober } from '../../prober/prober.js';
import type { Behaviours } from '../../simulate/behaviour.js';
import { simulatedHandlers } from '../../simulate/handlers.js';
import { simulatedHandlerRunner } from '../../simulate/hooks.js';
import { NODE_ID_SPAN } from '../../simulate/nodes.js';
import { SimRuntime } from '../../simulate/runtime.js';
import type { Clock } from '../../util/clock.js';

export interface SimulatedParts {
  runtime: SimRuntime;
  prober: NonNullable<NodeAgentOptions['prober']>;
  lifecycleHandlers: NonNullable<NodeAgentOptions['lifecycleHandlers']>;
}

/**
 * `index` is the node's place in its fleet (container IDs are numbered apart per node);
 * `behavioursOf` gives a pod's behaviours, asked once when its sandbox is made.
 */
export function simulatedParts(clock: Clock, index: number, behavioursOf: (pod: Pod) => Behaviours | undefined): SimulatedParts {
  // Its nodes have every image, so the kubelet's `Pulled` ("already present on machine") is recorded as on a real node.
  const runtime = new SimRuntime({ clock, behaviours: new Map(), idBase: index * NODE_ID_SPAN, behavioursFor: behavioursOf, imagesPresent: true });
  return {
    runtime,
    prober: (recorder) =>
      new Prober({
        runner: { runInContainer: (id, cmd, ms) => runtime.execSync(id, cmd, ms) },
        recorder,
        clock,
        handlers: simulatedHandlers(runtime, clock),
        httpHandlerReadsOnly: true,
      }),
    lifecycleHandlers: simulatedHandlerRunner(clock),
  };
}
