/**
 * The Engine's log stream in the CRI log format (`<RFC3339Nano> <stream> <P|F> <text>`), which
 * is what the kubelet's `/var/log/pods` files hold and what `kubectl logs` on a node reads
 * (src/node/container-logs.ts): with the same files as the CRI runtime, `--timestamps`,
 * `--since` and `--previous` work alike on both.
 *
 * Asked with `timestamps`, the Engine sends one frame per log message, `<time> <message>`: the
 * time is the daemon's (when the container wrote it, not when probelet read it — a node that
 * restarted and reads an adopted container's log again writes the same times). Docker's times
 * have nine digits; Podman's may have fewer or none, and an offset instead of `Z`: they are
 * written as UTC with nine digits. A frame without a time is stamped when it arrives.
 * A message without its newline (a long line cut by the log driver) is a partial `P` line;
 * the next one continues it, and the stream's end closes it with an empty `F` line.
 */

/** One stream's framer: frames in, CRI log lines out. */
export interface CriLogFramer {
  /** The CRI lines of one frame of the Engine's log stream. */
  frame(payload: Buffer): Buffer;
  /** At the end of the stream: an empty `F` line when the last line was partial, else nothing. */
  end(): Buffer;
}

/** `2026-11-29T03:20:01.123456789Z`, `2026-11-29T03:20:01Z`, `2026-11-29T03:20:01.5+01:00`. */
const TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) /;

/** The frame's time as RFC 3339 UTC with nine digits, and where its message starts; undefined when it has no time. */
export function frameTime(text: string): { time: string; rest: number } | undefined {
  const m = TIME.exec(text);
  if (!m) return undefined;
  const [whole, base = '', fraction = '', zone] = m;
  if (zone === 'Z') return { time: `${base}.${fraction.padEnd(9, '0')}Z`, rest: whole.length };
  const ms = Date.parse(`${base}${fraction ? `.${fraction.slice(0, 3)}` : ''}${zone ?? ''}`);
  if (!Number.isFinite(ms)) return undefined;
  return { time: nanoTime(ms, fraction.slice(3)), rest: whole.length };
}

/** Epoch milliseconds (and further digits of the fraction) as RFC 3339 UTC with nine digits. */
export function nanoTime(ms: number, moreDigits = ''): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 23)}${moreDigits.padEnd(6, '0').slice(0, 6)}Z`;
}

export function criLogFramer(stream: 'stdout' | 'stderr', now: () => number): CriLogFramer {
  let partial = false;
  let lastTime = '';
  return {
    frame(payload) {
      const text = payload.toString('utf8');
      const stamped = frameTime(text);
      const time = stamped?.time ?? nanoTime(now());
      lastTime = time;
      const message = stamped ? text.slice(stamped.rest) : text;
      let out = '';
      let from = 0;
      for (let nl = message.indexOf('\n'); nl >= 0; nl = message.indexOf('\n', from)) {
        out += `${time} ${stream} F ${message.slice(from, nl)}\n`;
        from = nl + 1;
      }
      partial = from < message.length;
      if (partial) out += `${time} ${stream} P ${message.slice(from)}\n`;
      return Buffer.from(out);
    },
    end() {
      if (!partial) return Buffer.alloc(0);
      partial = false;
      return Buffer.from(`${lastTime || nanoTime(now())} ${stream} F \n`);
    },
  };
}
