import { Command, CommanderError } from 'commander';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { CliUsageError, type CliIO, processIO } from './io.js';
import { registerCheckCommand } from './check.js';
import { registerExplainCommand } from './explain.js';
import { helpLayout } from './flags.js';
import { registerProbeCommand } from './probe.js';
import { registerNodeCommand } from './node.js';
import { registerRunCommand } from './run.js';
import { packageVersion } from './version.js';
import { registerSimulateCommand } from './simulate.js';

export { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** Builds the `probelet` program; each action reports its exit code through `setExit`. */
export function buildProgram(io: CliIO, setExit: (code: number) => void): Command {
  const program = new Command('probelet')
    .description("The kubelet's probe machinery, locally: see what your probes will do before you deploy.")
    .version(packageVersion(), '-V, --version', 'print the version of probelet')
    .showHelpAfterError()
    .configureHelp(helpLayout)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
    });
  registerProbeCommand(program, io, setExit);
  registerRunCommand(program, io, setExit);
  registerCheckCommand(program, io, setExit);
  registerSimulateCommand(program, io, setExit);
  registerNodeCommand(program, io, setExit);
  registerExplainCommand(program, io, setExit);
  return program;
}

/** Entry point of the `probelet` command; returns the process exit code. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are "errors" to commander but successes to the user.
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof CliUsageError) {
      io.stderr(`probelet: ${err.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`probelet: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_USAGE;
  }
  return exitCode;
}
