/**
 * The process's limit on open files (`ulimit -n`). Node has no `getrlimit`; Linux shows the
 * limits in /proc/self/limits. Undefined where that file is not (other systems) or unreadable.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface OpenFilesLimit {
  /** The limit in force (Node raises it to the hard limit at start-up). */
  soft: number;
  /** The most an unprivileged process may raise it to. */
  hard: number;
}

/** `Max open files  1024  1024  files` of /proc/self/limits; `unlimited` is Infinity. */
export function openFilesLimit(): OpenFilesLimit | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'latin1');
  } catch {
    return undefined;
  }
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const [soft, hard] = (line ?? '').slice('Max open files'.length).trim().split(/\s+/);
  const value = (text: string | undefined): number => (text === 'unlimited' ? Infinity : Number(text));
  const limit = { soft: value(soft), hard: value(hard) };
  return Number.isNaN(limit.soft) || Number.isNaN(limit.hard) ? undefined : limit;
}

/** File descriptors this process has open now (/proc/self/fd); undefined where that is not readable. */
export function openFileCount(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}
