/**
 * The shared conformance scenarios (test/cri/probe-scenarios.ts, test/cri/runtime-scenarios.ts)
 * on Podman's Docker-compatible service (`npm run docker:up -- --podman`) through the Docker
 * runtime: the same bodies as on containerd and on Docker Engine.
 */
import { probeScenarios } from '../cri/probe-scenarios.js';
import { runtimeScenarios } from '../cri/runtime-scenarios.js';
import { podmanTarget } from './helpers.js';

runtimeScenarios(podmanTarget);
probeScenarios(podmanTarget);
