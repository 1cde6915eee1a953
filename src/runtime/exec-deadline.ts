/**
 * The deadline of a whole ExecSync call beyond the command's own timeout, shared by the runtimes
 * that talk to a daemon (CRI, Docker), so that the runtime reports the command's timeout itself
 * and a runtime that never answers does not hold a probe worker for ever. The kubelet's CRI
 * client adds its runtime request timeout (`--runtime-request-timeout`, 2 min); probelet adds
 * 10 s, as its other CRI calls take 30 s rather than 2 min (cri/client.ts): a daemon stuck past
 * that fails the probe with the kubelet's timeout words up to 110 s sooner (docs/differences.md).
 */
export const EXEC_DEADLINE_SLACK_MS = 10_000;
