// The public library API (re-exports only). See DESIGN.md, "Public library API".
export type { Clock } from './util/clock.js';
export { FakeClock, realClock } from './util/clock.js';
export type { Outcome, ProbeOutcome, CommandRunner } from './probe/types.js';
export type { ProbeType, Result, ResultUpdate, PodStatusProvider, EventRecorder, EventRef } from './prober/types.js';
