/**
 * The shared conformance scenarios (test/cri/probe-scenarios.ts, test/cri/runtime-scenarios.ts)
 * and the signal scenarios of `probelet run` (shutdown-scenarios.ts) on Podman's
 * Docker-compatible service (`npm run docker:up -- --podman`) through the Docker runtime: the
 * same bodies as on containerd and on Docker Engine. Like those suites it runs whenever its
 * service is up (its socket exists), so `vitest run test/docker/` runs it too then (2–2.5 min):
 * `--exclude test/docker/podman.test.ts` leaves it out; CI requires it (PROBELET_REQUIRE_PODMAN=1).
 */
import { probeScenarios } from '../cri/probe-scenarios.js';
import { runtimeScenarios } from '../cri/runtime-scenarios.js';
import { PODMAN_CONNECTION, PODMAN_HOST, describePodman, podmanTarget } from './helpers.js';
import { shutdownScenarios } from './shutdown-scenarios.js';

runtimeScenarios(podmanTarget);
probeScenarios(podmanTarget);
shutdownScenarios({ name: 'podman', host: PODMAN_HOST, connection: PODMAN_CONNECTION, describe: describePodman });
