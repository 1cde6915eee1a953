/** Signals and a SIGKILL of `probelet run --runtime docker` on Docker Engine (shutdown-scenarios.ts). */
import { DOCKER_CONNECTION, DOCKER_HOST, describeDocker } from './helpers.js';
import { shutdownScenarios } from './shutdown-scenarios.js';

shutdownScenarios({ name: 'docker', host: DOCKER_HOST, connection: DOCKER_CONNECTION, describe: describeDocker });
