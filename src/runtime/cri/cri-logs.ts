/**
 * Reads the tail of a CRI log file (`2026-11-22T01:26:27.549963653Z stdout F text`, `P`
 * for a partial line) back into the container's output, as `kubectl logs` shows it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The last `maxBytes` of the file at `path`, decoded; '' when it cannot be read. */
export function readCriLogTail(path: string, maxBytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    let text = buffer.toString('utf8');
    // A cut first line is not a log line: drop it.
    if (length < size) text = text.slice(text.indexOf('\n') + 1);
    return parseCriLog(text);
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Strips the timestamp, stream and tag of each line; a `P` (partial) line continues on the next. */
export function parseCriLog(text: string): string {
  let out = '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const match = /^\S+ (?:stdout|stderr) ([PF]) ?(.*)$/.exec(line);
    if (!match) continue;
    out += match[1] === 'P' ? (match[2] ?? '') : `${match[2] ?? ''}\n`;
  }
  return out;
}
