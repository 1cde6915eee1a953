/**
 * The flag language every command shares (docs/commands.md): `-f FILE` beside positional
 * files, `-o text|json` with `table` accepted for `text`, durations as Go writes them with a
 * bare number meaning seconds, and the help layout (wrapped, with an example). One place,
 * so `probe`, `check`, `simulate` and `run` cannot drift apart again.
 */
import { Command, Help, InvalidArgumentError, Option } from 'commander';
import { CliUsageError } from './io.js';
import { parseDuration } from './run/flags.js';

/** The human format's name; {@link TEXT_ALIAS} is accepted for it everywhere. */
export const TEXT_OUTPUT = 'text';
export const TEXT_ALIAS = 'table';

/**
 * `-o, --output FORMAT` with `formats` (the first is the default, `text`): `table` is read
 * as `text`, so `-o table` and `-o text` mean the same on every command.
 */
export function outputOption<F extends string>(formats: readonly F[], description: string): Option {
  const shown = [...formats, TEXT_ALIAS].join(', ');
  return new Option('-o, --output <format>', `${description} (${shown}; ${TEXT_ALIAS} is ${TEXT_OUTPUT})`)
    .default(formats[0])
    .argParser((value: string) => {
      const format = value === TEXT_ALIAS ? TEXT_OUTPUT : value;
      if (!(formats as readonly string[]).includes(format)) {
        throw new InvalidArgumentError(`expected one of ${shown}.`);
      }
      return format;
    });
}

/** `-f, --filename FILE` (repeatable, as `kubectl apply -f`), merged with positional files by {@link inputPaths}. */
export function filenameOption(): Option {
  return new Option('-f, --filename <file>', 'a manifest file or folder, or - for standard input (repeatable; files may also be given without -f)').argParser(
    (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
  );
}

/** The files of `-f` then the positional ones, in the order given per kind. */
export function inputPaths(positional: readonly string[], filenames: readonly string[] | undefined): string[] {
  return [...(filenames ?? []), ...positional];
}

/**
 * A duration flag that stands for an API field kept in whole seconds (`probe --timeout` is
 * `timeoutSeconds`): any duration is read (`2s`, `1m`, `45`), and a fraction is refused
 * with that reason rather than rounded behind the user's back.
 */
export function parseWholeSeconds(text: string, flag: string, field: string): number {
  const ms = parseDuration(text, flag);
  if (ms % 1000 !== 0) {
    throw new CliUsageError(`${flag} ${text}: ${field} is a whole number of seconds in the Kubernetes API, so a fraction cannot be probed: give e.g. ${Math.max(1, Math.round(ms / 1000))}s`);
  }
  return ms / 1000;
}

/** Fewer columns than this beside the flags, and a description goes below its flag instead. */
const MIN_DESCRIPTION_WIDTH = 40;
const DESCRIPTION_INDENT = 6;

/**
 * Commander's layout, except that a command with long flag names (`simulate -b`, `check
 * --probe-p99`) would leave descriptions no room and commander then stops wrapping them:
 * there each description goes on the lines below its flag, wrapped to the terminal
 * (commander takes the width from the terminal, 80 when output is not one).
 */
export const helpLayout: Partial<Help> = {
  formatItem(term: string, termWidth: number, description: string, helper: Help): string {
    const width = helper.helpWidth ?? 80;
    if (!description || width - termWidth - 4 >= MIN_DESCRIPTION_WIDTH) return Help.prototype.formatItem.call(helper, term, termWidth, description, helper);
    const indent = ' '.repeat(DESCRIPTION_INDENT);
    const wrapped = helper.boxWrap(description, width - DESCRIPTION_INDENT).replace(/\n/g, `\n${indent}`);
    return `  ${term}\n${indent}${wrapped}`;
  },
};

/** Every subcommand's help ends with examples (lines kept short: they are not wrapped). */
export function addExamples(command: Command, examples: readonly string[]): Command {
  return command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  ${e}\n`).join('')}`);
}
