/**
 * The deadline of a whole ExecSync call beyond the command's own timeout, shared by the runtimes
 * that talk to a daemon (CRI, Docker): the kubelet's CRI client gives the call its timeout plus
 * the runtime request timeout, so that the runtime reports the command's timeout itself, and a
 * runtime that never answers does not hold a probe worker for ever.
 */
export const EXEC_DEADLINE_SLACK_MS = 10_000;
