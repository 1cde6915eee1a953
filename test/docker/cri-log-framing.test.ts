/** The Engine's log frames as CRI log lines (src/runtime/docker/cri-log-framing.ts): times, partial lines, frames without a time. */
import { describe, expect, it } from 'vitest';
import { criLogFramer, frameTime } from '../../src/runtime/docker/cri-log-framing.js';
import { parseCriLines } from '../../src/node/container-logs.js';

const NOW = Date.parse('2026-11-29T03:00:00.250Z');
const lines = (b: Buffer): string[] => b.toString().split('\n').filter((l) => l !== '');

describe('criLogFramer', () => {
  it("keeps Docker's nine digits; widens Podman's seconds and offsets to UTC with nine digits", () => {
    expect(frameTime('2026-11-29T03:20:01.123456789Z hi')).toEqual({ time: '2026-11-29T03:20:01.123456789Z', rest: 31 });
    expect(frameTime('2026-11-29T03:20:01Z hi')?.time).toBe('2026-11-29T03:20:01.000000000Z');
    expect(frameTime('2026-11-29T04:20:01.5+01:00 hi')?.time).toBe('2026-11-29T03:20:01.500000000Z');
    expect(frameTime('2026-11-29T04:20:01.123456789+01:00 hi')?.time).toBe('2026-11-29T03:20:01.123456789Z');
    expect(frameTime('hello world')).toBeUndefined();
  });

  it('one F line per line of the frame; a message without its newline is P, closed by an empty F at the end', () => {
    const f = criLogFramer('stderr', () => NOW);
    expect(lines(f.frame(Buffer.from('2026-11-29T03:20:01.000000001Z a\n')))).toEqual(['2026-11-29T03:20:01.000000001Z stderr F a']);
    expect(lines(f.frame(Buffer.from('2026-11-29T03:20:02.000000001Z b\nc')))).toEqual(['2026-11-29T03:20:02.000000001Z stderr F b', '2026-11-29T03:20:02.000000001Z stderr P c']);
    expect(lines(f.end())).toEqual(['2026-11-29T03:20:02.000000001Z stderr F ']);
    expect(f.end().length).toBe(0);
    // What kubectl logs reads from them.
    const text = Buffer.concat([f.frame(Buffer.from('2026-11-29T03:20:03Z x')), f.frame(Buffer.from('2026-11-29T03:20:03Z y\n'))]).toString();
    expect(parseCriLines(text).map((l) => l.text)).toEqual(['xy\n']);
  });

  it('a frame without a time is stamped when it arrives', () => {
    expect(lines(criLogFramer('stdout', () => NOW).frame(Buffer.from('plain\n')))).toEqual(['2026-11-29T03:00:00.250000000Z stdout F plain']);
  });
});
