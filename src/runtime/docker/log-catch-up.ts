/**
 * What a follow stream of a container's logs missed, from one read of the whole log after it
 * ended. Podman 4.3's service ends a follow stream when the container has died (250 ms after its
 * `died` event, or at once for a container no longer running) by telling its file tailer to
 * stop at the end of the file — and a tailer that was waiting for the file to grow stops without
 * reading the last lines conmon wrote: under load a short-lived container's last line (its
 * stderr `oops` after a stdout line) was missing from the kubelet's log file in 2 runs of 9, and
 * in 2 of 30 here, while a read of the log without `follow` right after had it.
 *
 * The Engine's multiplexed stream is frames of `[stream, 0, 0, 0, size (4 bytes, big-endian)]`
 * and `size` bytes; the follow stream gave each stream's first frames, so the read's frames past
 * the bytes already received, stream by stream, are the missed ones.
 */

export type LogStream = 'stdout' | 'stderr';

export interface LogFrame {
  stream: LogStream;
  payload: Buffer;
}

/** The frames of a multiplexed log read (stdin frames and a cut last frame are dropped). */
export function demuxFrames(data: Buffer): LogFrame[] {
  const frames: LogFrame[] = [];
  let at = 0;
  while (at + 8 <= data.length) {
    const kind = data[at];
    const size = data.readUInt32BE(at + 4);
    const payload = data.subarray(at + 8, at + 8 + size);
    if (payload.length < size) break;
    if (kind === 1 || kind === 2) frames.push({ stream: kind === 1 ? 'stdout' : 'stderr', payload });
    at += 8 + size;
  }
  return frames;
}

/** The frames of `all` past the first `received[stream]` payload bytes of each stream. */
export function unseenFrames(all: readonly LogFrame[], received: Readonly<Record<LogStream, number>>): LogFrame[] {
  const skipped: Record<LogStream, number> = { stdout: 0, stderr: 0 };
  const unseen: LogFrame[] = [];
  for (const frame of all) {
    const left = received[frame.stream] - skipped[frame.stream];
    if (left <= 0) {
      unseen.push(frame);
      continue;
    }
    skipped[frame.stream] += Math.min(left, frame.payload.length);
    if (left < frame.payload.length) unseen.push({ stream: frame.stream, payload: frame.payload.subarray(left) });
  }
  return unseen;
}
