/**
 * What a pod's commands would do on this host, read before the process runtime runs them:
 * the programs they start that this host does not have (they would come from the image: the
 * pod was written for a container runtime), and the host paths they write outside a scratch
 * directory (`mkdir -p /www`, `echo … > /opt/logs.txt`: as root, on the host's own files).
 *
 * A reading, not a shell: the command itself, and for `sh -c SCRIPT` each simple command of
 * the script (split at `;`, `&&`, `||`, `|`, `&`, parentheses and new lines, quotes honoured);
 * redirections and the path operands of mkdir, touch, tee, cp, mv, rm, ln. Scripts that hide a
 * write (a variable, `eval`) are not seen; what is seen is refused unless asked for. Linear in
 * the script's length.
 */
import { accessSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Container, Pod } from '../../api/types.js';
import { trimTrailing } from '../../util/trim.js';

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'zsh', 'ksh', '/bin/sh', '/bin/bash', '/bin/ash', '/bin/dash', '/usr/bin/bash', '/usr/bin/sh']);

/** Words a script runs that are no program on PATH: shell keywords and builtins. */
const NOT_PROGRAMS = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'for', 'in', 'do', 'done', 'while', 'until', 'case', 'esac', '{', '}', '!', '[[', ']]',
  'cd', 'echo', 'exec', 'exit', 'export', 'set', 'unset', 'trap', 'wait', 'read', 'shift', 'source', '.', ':', 'true',
  'false', 'test', '[', 'printf', 'local', 'return', 'break', 'continue', 'eval', 'ulimit', 'umask', 'kill', 'command',
  'type', 'let', 'declare', 'readonly', 'times', 'alias', 'hash', 'pwd',
]);

/** Programs whose path operands they create, change or remove. */
const WRITERS = new Set(['mkdir', 'touch', 'tee', 'cp', 'mv', 'rm', 'ln', 'install', 'chmod', 'chown']);

/** What is wrong with running `pod` on this host, one line per finding; [] when nothing is seen. */
export interface HostCommandFindings {
  /** `container "c" runs httpd, which is not on this host`. */
  missing: string[];
  /** `container "c" writes to /www (mkdir -p /www)`. */
  writes: string[];
}

export function hostCommandFindings(pod: Pod, path: string = process.env.PATH ?? ''): HostCommandFindings {
  const findings: HostCommandFindings = { missing: [], writes: [] };
  const containers: Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const scratch = scratchRoots();
  for (const c of containers) {
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    const image = c.image ? ` (it would come from the image ${c.image})` : '';
    for (const program of new Set(programsOf(argv))) {
      if (!onThisHost(program, path)) findings.missing.push(`container "${c.name}" runs ${program}, which this host does not have${image}`);
    }
    for (const written of new Set(writesOf(argv))) {
      if (!scratch.some((root) => written === root || written.startsWith(`${root}/`))) {
        findings.writes.push(`container "${c.name}" writes to ${written} on this host`);
      }
    }
  }
  return findings;
}

/** Where a command may write without touching the host's own files. */
function scratchRoots(): string[] {
  return ['/tmp', '/dev', '/proc/self', trimTrailing(tmpdir(), '/')];
}

function onThisHost(program: string, path: string): boolean {
  const candidates = program.includes('/') ? [program] : path.split(delimiter).filter((d) => d !== '').map((d) => join(d, program));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The programs `argv` starts: itself, and each simple command of a `sh -c` script. */
function programsOf(argv: readonly string[]): string[] {
  const [first] = argv;
  if (first === undefined) return [];
  const script = shellScript(argv);
  if (script === undefined) return [first];
  const programs = [first];
  for (const words of simpleCommands(script)) {
    const program = commandWord(words);
    if (program !== undefined && !NOT_PROGRAMS.has(program) && !program.startsWith('$')) programs.push(program);
  }
  return programs;
}

/** The absolute paths `argv` writes to: redirections and writers' operands in a `sh -c` script. */
function writesOf(argv: readonly string[]): string[] {
  const script = shellScript(argv);
  const commands = script === undefined ? [argv.slice()] : simpleCommands(script);
  const paths: string[] = [];
  for (const words of commands) {
    words.forEach((word, i) => {
      const redirected = /^[0-9]?>>?(.*)$/.exec(word);
      if (redirected) {
        const target = redirected[1] !== '' ? redirected[1] : words[i + 1];
        if (target !== undefined && isAbsolute(target)) paths.push(target);
      }
    });
    const program = commandWord(words);
    if (program !== undefined && WRITERS.has(program.slice(program.lastIndexOf('/') + 1))) {
      const at = words.indexOf(program);
      for (const operand of words.slice(at + 1)) if (!operand.startsWith('-') && isAbsolute(operand)) paths.push(operand);
    }
  }
  return paths;
}

/** The script of `sh -c SCRIPT` (command or args), else undefined. */
function shellScript(argv: readonly string[]): string | undefined {
  const [shell, flag, script] = argv;
  if (shell === undefined || !SHELLS.has(shell)) return undefined;
  return flag !== undefined && /^-[a-z]+$/.test(flag) && flag.includes('c') ? script : undefined;
}

/** The program of a simple command: its first word after variable assignments and `exec`. */
function commandWord(words: readonly string[]): string | undefined {
  for (const word of words) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word) || word === 'exec' || word === 'nohup' || word === 'then' || word === 'do' || word === 'else') continue;
    return word;
  }
  return undefined;
}

/** The script's simple commands as words: split at separators and blanks outside quotes. */
function simpleCommands(script: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let quote = '';
  let inWord = false;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (const ch of script) {
    if (quote !== '') {
      if (ch === quote) quote = '';
      else word += ch;
      continue;
    }
    if (ch === '&' && word.endsWith('>')) {
      word += ch; // a redirection to a descriptor (2>&1, >&2), not a separator
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\n' || ch === ';' || ch === '&' || ch === '|' || ch === '(' || ch === ')' || ch === '`') {
      endCommand();
    } else if (ch === ' ' || ch === '\t') {
      endWord();
    } else {
      word += ch;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}
