/**
 * What a probe sees of a command run in a container, for every runtime: stdout then stderr,
 * at most DEFAULT_MAX_OUTPUT_BYTES in all (the kubelet's ExecSync result, read as a string).
 */
import { DEFAULT_MAX_OUTPUT_BYTES } from '../spawn/index.js';

export function execOutput(stdout: Buffer, stderr: Buffer): string {
  return Buffer.concat([stdout, stderr]).subarray(0, DEFAULT_MAX_OUTPUT_BYTES).toString('utf8');
}
