/**
 * The one input rule of every command (docs/commands.md): a path the user typed that cannot
 * be read is a usage error — exit 2 before anything starts, every such path named at once;
 * an invalid document inside a readable file costs that document only, the others are
 * processed, and the command exits 2 at the end. This file holds the first half; the
 * second is each command's `problems` count turned into its exit code.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { STDIN_PATH } from '../api/documents.js';
import { CliUsageError } from './io.js';

/** Words a user types after a number as a unit (`--for 5 minutes`): never meant as files. */
const UNIT_WORDS = /^(?:ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)$/i;
/** `HOST:PORT` or `:PORT`: an address left over from a flag that no longer takes one. */
const ADDRESS = /^(?:\[[^\]]*\]|[\w.-]*):\d{1,5}$/;

/**
 * Throws a CliUsageError naming every path of `paths` that cannot be read (with a hint
 * when the "path" was plainly meant as something else); `-` (stdin) always passes.
 */
export async function requireReadable(paths: readonly string[]): Promise<void> {
  const found = await unreadablePaths(paths);
  const misplaced = found.filter((u) => u.misplaced === true).map((u) => u.message);
  const unreadable = found.filter((u) => u.misplaced !== true).map((u) => `${u.path}: ${u.message}`);
  if (unreadable.length > 0) {
    throw new CliUsageError([...misplaced, ...unreadable].join('\nprobelet: ') + `\nprobelet: nothing was started (fix the path${unreadable.length > 1 ? 's' : ''} above)`);
  }
  if (misplaced.length > 0) throw new CliUsageError(`${misplaced.join('\nprobelet: ')}\nprobelet: nothing was started`);
}

/**
 * Every path of `paths` that cannot be read, with `cannot read: why` (and a hint); `-` always
 * passes. `misplaced`: the word was no file the user meant but part of a flag's value.
 */
export async function unreadablePaths(paths: readonly string[]): Promise<{ path: string; message: string; misplaced?: boolean }[]> {
  const unreadable: { path: string; message: string; misplaced?: boolean }[] = [];
  for (const path of paths) {
    if (path === STDIN_PATH) continue;
    const why = await unreadableReason(path);
    if (why === undefined) continue;
    // `--for 5 minutes`: "minutes" is no file the user meant; the flag is what to fix.
    const flagHint = why === 'no such file or directory' ? misplacedValue(path) : undefined;
    if (flagHint !== undefined) unreadable.push({ path, message: flagHint, misplaced: true });
    else unreadable.push({ path, message: `cannot read: ${why}${hint(path)}` });
  }
  return unreadable;
}

/** What a word taken for a file but meant as part of a flag's value is (`minutes`, `127.0.0.1:8080`). */
function misplacedValue(path: string): string | undefined {
  if (UNIT_WORDS.test(path)) return `${JSON.stringify(path)} is taken for a file: a duration is one word, without a space (e.g. --for 5m, --timeout 30s)`;
  if (ADDRESS.test(path)) return `${JSON.stringify(path)} is taken for a file: an address goes with --listen (e.g. --listen ${path})`;
  return undefined;
}

async function unreadableReason(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    await access(path, info.isDirectory() ? constants.R_OK | constants.X_OK : constants.R_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file or directory';
    if (code === 'EACCES') return 'permission denied';
    if (code === 'ENOTDIR') return 'a part of the path is not a directory';
    return err instanceof Error ? err.message : String(err);
  }
}

function hint(path: string): string {
  if (UNIT_WORDS.test(path)) return ` (a duration is written without a space, e.g. --for 5m or --timeout 30s)`;
  if (ADDRESS.test(path)) return ` (an address goes with --listen, e.g. --listen ${path})`;
  return '';
}
