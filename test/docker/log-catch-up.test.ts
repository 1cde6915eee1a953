/** What a follow stream of logs missed (src/runtime/docker/log-catch-up.ts), from a read of the whole log: Podman's follow may end before the last lines. */
import { describe, expect, it } from 'vitest';
import { demuxFrames, unseenFrames } from '../../src/runtime/docker/log-catch-up.js';

/** One frame of the Engine's multiplexed stream. */
function frame(kind: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = kind;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

const OUT = '2026-11-29T09:51:36Z hello-world\n';
const ERR = '2026-11-29T09:51:36Z oops\n';

describe('log catch-up', () => {
  it('reads the frames of a multiplexed read; stdin frames and a cut last frame are dropped', () => {
    const read = Buffer.concat([frame(1, OUT), frame(0, 'in'), frame(2, ERR), frame(1, 'cut').subarray(0, 9)]);
    expect(demuxFrames(read).map((f) => [f.stream, f.payload.toString()])).toEqual([
      ['stdout', OUT],
      ['stderr', ERR],
    ]);
  });

  it('keeps, stream by stream, the frames past the bytes the follow stream gave (what Podman 4.3 dropped: the last stderr line)', () => {
    const all = demuxFrames(Buffer.concat([frame(1, OUT), frame(2, ERR), frame(1, 'late\n')]));
    const unseen = unseenFrames(all, { stdout: Buffer.byteLength(OUT), stderr: 0 });
    expect(unseen.map((f) => [f.stream, f.payload.toString()])).toEqual([
      ['stderr', ERR],
      ['stdout', 'late\n'],
    ]);
    expect(unseenFrames(all, { stdout: Buffer.byteLength(OUT) + 5, stderr: Buffer.byteLength(ERR) })).toEqual([]);
    // A frame the follow stream gave in part: its rest.
    expect(unseenFrames(all, { stdout: 4, stderr: Buffer.byteLength(ERR) }).map((f) => f.payload.toString())).toEqual([OUT.slice(4), 'late\n']);
  });
});
