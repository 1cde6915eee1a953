/**
 * What the kubelet's `GetContainerLogs` returns for `kubectl logs` (kuberuntime_logs.go,
 * pkg/kubelet/kuberuntime/logs): the container's CRI log file read line by line — each line
 * `<RFC3339Nano time> <stream> <P|F> <text>` — with the PodLogOptions applied: `sinceSeconds`
 * (lines older than that are skipped), `tailLines` (the last N lines), `timestamps` (the
 * line's time before it), `limitBytes` (the output is cut after that many bytes). A runtime
 * without CRI log files (the process and simulated runtimes) gives its raw output, which has
 * no times: `timestamps` and `sinceSeconds` do not apply to it.
 */

/** One log line of a CRI file, joined from its partial (`P`) pieces. */
export interface LogLine {
  /** As written (RFC 3339 with nanoseconds); '' for raw output. */
  time: string;
  stream: 'stdout' | 'stderr';
  /** The line with its newline (the last line of raw output may lack one). */
  text: string;
}

/** The PodLogOptions the kubelet reads (query parameters of `/containerLogs`). */
export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  limitBytes?: number;
}

/** Parses CRI log text; `pending` carries a line's partial pieces from one read to the next (follow). */
export function parseCriLines(text: string, pending: { text: string } = { text: '' }): LogLine[] {
  const out: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const m = /^(\S+) (stdout|stderr) ([PF]) ?(.*)$/.exec(raw);
    if (!m) continue;
    if (m[3] === 'P') {
      pending.text += m[4] ?? '';
      continue;
    }
    out.push({ time: m[1] ?? '', stream: m[2] as LogLine['stream'], text: `${pending.text}${m[4] ?? ''}\n` });
    pending.text = '';
  }
  return out;
}

/** Raw output as lines (no times). */
export function rawLines(text: string): LogLine[] {
  const parts = text.split(/(?<=\n)/).filter((p) => p !== '');
  return parts.map((text) => ({ time: '', stream: 'stdout', text }));
}

/** Query parameters → options; a bad number is an error naming the parameter. */
export function parseLogOptions(query: URLSearchParams): LogOptions {
  const bool = (key: string): boolean => query.get(key) === 'true' || query.get(key) === '1';
  const int = (key: string, min: number): number | undefined => {
    const v = query.get(key);
    if (v === null || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${key}: ${JSON.stringify(v)} must be a whole number of at least ${min}`);
    return n;
  };
  const options: LogOptions = { follow: bool('follow'), previous: bool('previous'), timestamps: bool('timestamps') };
  // A negative tailLines is "all" (the kubelet drops it).
  const tail = query.get('tailLines');
  if (tail !== null && tail !== '' && Number(tail) >= 0) options.tailLines = int('tailLines', 0);
  const since = int('sinceSeconds', 1);
  if (since !== undefined) options.sinceSeconds = since;
  const limit = int('limitBytes', 1);
  if (limit !== undefined) options.limitBytes = limit;
  return options;
}

/** The lines to send of those already written: `sinceSeconds` first, then `tailLines`. */
export function selectLines(lines: readonly LogLine[], options: LogOptions, nowMs: number): LogLine[] {
  let selected = [...lines];
  if (options.sinceSeconds !== undefined) {
    const from = nowMs - options.sinceSeconds * 1000;
    selected = selected.filter((l) => l.time === '' || Date.parse(l.time) >= from);
  }
  if (options.tailLines !== undefined) selected = options.tailLines === 0 ? [] : selected.slice(-options.tailLines);
  return selected;
}

/**
 * A line as `kubectl logs` prints it: with `timestamps`, its time and a space first, in Go's
 * RFC3339Nano (the kubelet re-formats the file's fixed nine digits: trailing zeros dropped).
 */
export function formatLine(line: LogLine, timestamps: boolean): string {
  return timestamps && line.time !== '' ? `${rfc3339Nano(line.time)} ${line.text}` : line.text;
}

function rfc3339Nano(time: string): string {
  const dot = time.indexOf('.');
  if (dot < 0) return time;
  let end = dot + 1;
  while (end < time.length && time.charCodeAt(end) >= 48 && time.charCodeAt(end) <= 57) end++;
  let keep = end;
  while (keep > dot + 1 && time[keep - 1] === '0') keep--;
  return `${time.slice(0, keep === dot + 1 ? dot : keep)}${time.slice(end)}`;
}
