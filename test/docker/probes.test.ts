/** The shared probe scenarios (test/cri/probe-scenarios.ts) on the Docker runtime, on a real daemon. */
import { probeScenarios } from '../cri/probe-scenarios.js';
import { dockerTarget } from './helpers.js';

probeScenarios(dockerTarget);
