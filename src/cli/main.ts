import { Command, CommanderError } from 'commander';
import { EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { CliUsageError, type CliIO, processIO } from './io.js';
import { registerCheckCommand } from './check/check.js';
import { registerExplainCommand } from './explain.js';
import { helpLayout } from './flags.js';
import { registerProbeCommand } from './probe/probe.js';
import { registerNodeCommand } from './node.js';
import { registerRunCommand } from './run/run.js';
import { packageVersion } from './version.js';
import { registerSimulateCommand } from './simulate/simulate.js';
import { trimTrailing } from '../util/trim.js';

export { EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

/** Builds the `probelet` program; each action reports its exit code through `setExit`. */
export function buildProgram(io: CliIO, setExit: (code: number) => void): Command {
  const program = new Command('probelet')
    .description("The kubelet's probe machinery, locally: see what your probes will do before you deploy.")
    .version(packageVersion(), '-v, --version', 'print the version of probelet (also -V, or `probelet version`)')
    .showHelpAfterError('(`probelet --help` lists the commands)')
    .configureHelp(helpLayout)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: (s, write) => write(withPrefixSuggestion(s, program)),
    });
  registerProbeCommand(program, io, setExit);
  registerRunCommand(program, io, setExit);
  registerCheckCommand(program, io, setExit);
  registerSimulateCommand(program, io, setExit);
  registerNodeCommand(program, io, setExit);
  registerExplainCommand(program, io, setExit);
  program
    .command('version')
    .description('print the version of probelet')
    .action(() => io.stdout(`${packageVersion()}\n`));
  // An error is one line and where help is, not the whole help scrolling it away.
  for (const command of program.commands) command.showHelpAfterError(`(\`probelet ${command.name()} --help\` lists its options)`);
  return program;
}

/**
 * Commander suggests the closest option by edit distance, so `--http` gets `--help`. A
 * flag that begins exactly one option's name (`--http` → `--http-get`) is what was meant.
 */
function withPrefixSuggestion(message: string, program: Command): string {
  const unknown = /^error: unknown option '(--[a-z][a-z-]*)'/.exec(message)?.[1];
  if (unknown === undefined) return message;
  const longs = new Set(program.commands.flatMap((c) => c.options.map((o) => o.long ?? '')).filter((l) => l.startsWith(unknown) && l !== unknown));
  if (longs.size !== 1) return message;
  const [only] = longs;
  return `${trimTrailing(withoutSuggestion(message), '\n')}\n(Did you mean ${only}?)\n`;
}

/** Entry point of the `probelet` command; returns the process exit code. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    // -V is commander's default short flag for the version, which earlier releases had.
    await program.parseAsync(argv.length === 1 && argv[0] === '-V' ? ['-v'] : argv, { from: 'user' });
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

/** commander's message without its own `(Did you mean …)` (found by index: linear on any text). */
function withoutSuggestion(message: string): string {
  const at = message.indexOf('(Did you mean ');
  if (at < 0) return message;
  const end = message.indexOf(')', at);
  const start = at > 0 && message[at - 1] === '\n' ? at - 1 : at;
  return end < 0 ? message : message.slice(0, start) + message.slice(end + 1);
}
