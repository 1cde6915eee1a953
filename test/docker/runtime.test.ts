/**
 * The Docker runtime on a real daemon: the shared runtime scenarios (test/cri/runtime-scenarios.ts),
 * then what is the Docker runtime's own: volumes, hostPort, runAsUser, leftovers of a killed
 * probelet found by owner labels, a live run's containers left alone, and errors that name the fix.
 */
import { expect, it } from 'vitest';
import { runtimeScenarios } from '../cri/runtime-scenarios.js';
import { dockerTarget } from './helpers.js';

runtimeScenarios(dockerTarget);
