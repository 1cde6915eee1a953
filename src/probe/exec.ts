/**
 * The exec probe handler (kubelet `pkg/probe/exec` plus the prober's command expansion).
 * It only interprets what a {@link CommandRunner} reports; running the command is the
 * runner's business (a CRI runtime upstream, `LocalCommandRunner` here).
 */
import type { EnvVar } from '../api/types.js';
import { expandVars } from '../util/expand.js';
import { MAX_PROBE_OUTPUT_BYTES } from './constants.js';
import { fdExhaustion } from './net-errors.js';
import type { CommandRunner, HandlerObservation, ProbeOutcome } from './types.js';

/** Prefix the kubelet's timeout sentinel gives every exec timeout message. */
const TIMED_OUT = 'command timed out';

export { ExecTimeoutError } from '../spawn/index.js';


/**
 * Runs one exec probe: `command` (already expanded) in `containerID` via `runner`.
 * Exit 0 → success; any other exit → failure with the output only (the kubelet does not
 * add the exit code); a timeout → failure with `command timed out: …` as output; any
 * other runner error → unknown with `error` set (an errored probe, retried by the
 * prober), keeping whatever output the error carried. Output (stdout then stderr) is
 * cut to the kubelet's 10 KiB.
 */
export async function probeExec(
  runner: CommandRunner,
  containerID: string,
  command: string[],
  timeoutMs: number,
  seen?: HandlerObservation,
): Promise<ProbeOutcome> {
  let result: { output: string; exitCode: number };
  try {
    result = await runner.runInContainer(containerID, command, timeoutMs);
  } catch (caught) {
    const error = caught instanceof Error ? caught : new Error(String(caught));
    if (error.name === 'TimeoutError') return { result: 'failure', output: timeoutOutput(error.message) };
    const exhausted = fdExhaustion(error, `exec ${command.join(' ')}`);
    if (exhausted) return { result: 'unknown', output: '', error: exhausted };
    return { result: 'unknown', output: capOutput(carriedOutput(error)), error };
  }
  const output = capOutput(result.output);
  if (seen) seen.exitCode = result.exitCode;
  return result.exitCode === 0 ? { result: 'success', output } : { result: 'failure', output };
}

/**
 * Expands `$(VAR)` in each element of an exec probe's command like the kubelet's
 * `ExpandContainerCommandOnlyStatic`: only literal `value`s count (a `valueFrom`-only
 * name expands to the empty string), a later duplicate wins, an unknown name stays
 * `$(NAME)`. The kubelet does it this way because it resolves probes without the API
 * lookups `valueFrom` would need; copying the quirk keeps verdicts identical.
 */
export function expandCommandOnlyStatic(command: readonly string[], env: readonly EnvVar[] | undefined): string[] {
  // Looked up from the end (a later duplicate wins), and only for a part with a `$`: every
  // exec probe expands its command, and a table per probe cost more than the lookups.
  const lookup = (name: string): string | undefined => {
    const vars = env ?? [];
    for (let i = vars.length - 1; i >= 0; i--) {
      const variable = vars[i];
      if (variable?.name === name) return variable.value ?? '';
    }
    return undefined;
  };
  return command.map((part) => (part.includes('$') ? expandVars(part, lookup) : part));
}

/** The kubelet's sentinel wording, without doubling it when the runner already used it. */
function timeoutOutput(message: string): string {
  if (message.startsWith(TIMED_OUT)) return message;
  return message === '' ? TIMED_OUT : `${TIMED_OUT}: ${message}`;
}

function carriedOutput(error: Error): string {
  const output: unknown = (error as { output?: unknown }).output;
  if (typeof output === 'string') return output;
  if (Buffer.isBuffer(output)) return output.toString('utf8');
  return '';
}

/** First 10 KiB (bytes, not characters) of the output, as the kubelet's LimitWriter keeps. */
function capOutput(output: string): string {
  if (output.length * 3 <= MAX_PROBE_OUTPUT_BYTES) return output;
  const bytes = Buffer.from(output, 'utf8');
  if (bytes.length <= MAX_PROBE_OUTPUT_BYTES) return output;
  return bytes.subarray(0, MAX_PROBE_OUTPUT_BYTES).toString('utf8');
}
