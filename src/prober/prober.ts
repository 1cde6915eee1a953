import type { Container, Pod, PodStatus, Probe } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { CommandRunner, ProbeOutcome } from '../probe/types.js';
import type { EventRecorder, ProbeType, Result } from './types.js';

export interface ProberOptions {
  runner: CommandRunner;
  recorder?: EventRecorder;
  clock?: Clock;
}

/** Runs one probe for a worker: picks the handler, retries errored attempts, maps outcomes, records events. */
export class Prober {
  constructor(_options: ProberOptions) {}

  async probe(
    _probeType: ProbeType,
    _pod: Pod,
    _status: PodStatus,
    _container: Container,
    _containerID: string,
  ): Promise<{ result: Result; error?: Error }> {
    throw new Error('Prober.probe: not implemented yet');
  }

  async runProbe(
    _probeType: ProbeType,
    _probeSpec: Probe,
    _pod: Pod,
    _status: PodStatus,
    _container: Container,
    _containerID: string,
  ): Promise<ProbeOutcome> {
    throw new Error('Prober.runProbe: not implemented yet');
  }
}
