/** The shared probe scenarios (probe-scenarios.ts) on the CRI runtime, on containerd. */
import { probeScenarios } from './probe-scenarios.js';
import { criTarget } from './target.js';

probeScenarios(criTarget);
