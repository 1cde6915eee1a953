/**
 * `probelet run`'s view is written for as long as the run lasts; when nobody reads stdout (a
 * pipe into a program that never reads it) Node queues every line in memory, and the run's
 * RSS grew by the view's rate (2 MB/s of JSON) without end (issue 33). Past a bounded backlog
 * the view's lines are dropped, not queued, and stderr says so: once when dropping starts,
 * and how many were dropped when the reader catches up.
 */

/** At most this many bytes of output wait for stdout's reader; the lines after them are dropped. */
export const STDOUT_BACKLOG_BYTES = 1024 * 1024;

/**
 * `write` behind a backlog bound: `backlog()` is how many bytes already wait for the reader
 * (a stream's `writableLength`: `write()` returned false long ago). Whole lines are dropped,
 * never cut, so JSON output stays one object a line.
 */
export function boundedWriter(
  write: (text: string) => void,
  backlog: () => number,
  notice: (text: string) => void,
  limit = STDOUT_BACKLOG_BYTES,
): (text: string) => void {
  let dropped = 0;
  return (text) => {
    if (backlog() >= limit) {
      if (dropped === 0) notice(`stdout is not being read: output lines are dropped until it is (at most ${limit} bytes wait for it)`);
      dropped++;
      return;
    }
    if (dropped > 0) {
      notice(`stdout is read again: ${dropped} output line${dropped === 1 ? ' was' : 's were'} dropped meanwhile`);
      dropped = 0;
    }
    write(text);
  };
}
