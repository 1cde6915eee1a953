/**
 * The log reading behind `kubectl logs` (kuberuntime logs): CRI lines joined from partial
 * pieces, PodLogOptions as the kubelet applies them, timestamps in Go's RFC3339Nano.
 */
import { describe, expect, it } from 'vitest';
import { formatLine, parseCriLines, parseLogOptions, rawLines, selectLines } from '../../src/node/container-logs.js';

const FILE = [
  '2026-11-27T04:00:00.100000000Z stdout F line 1',
  '2026-11-27T04:00:01.000000000Z stderr P par',
  '2026-11-27T04:00:01.500000000Z stderr F tial',
  '2026-11-27T04:00:02.123456789Z stdout F line 3',
  'garbage',
  '',
].join('\n');

describe('container logs', () => {
  it('parses CRI lines, joining partial (P) pieces; raw output keeps its lines', () => {
    expect(parseCriLines(FILE).map((l) => [l.time, l.stream, l.text])).toEqual([
      ['2026-11-27T04:00:00.100000000Z', 'stdout', 'line 1\n'],
      ['2026-11-27T04:00:01.500000000Z', 'stderr', 'partial\n'],
      ['2026-11-27T04:00:02.123456789Z', 'stdout', 'line 3\n'],
    ]);
    // A partial piece read before its end (follow) is carried to the next read.
    const pending = { text: '' };
    expect(parseCriLines('2026-11-27T04:00:01Z stdout P ab\n', pending)).toEqual([]);
    expect(parseCriLines('2026-11-27T04:00:02Z stdout F c\n', pending).map((l) => l.text)).toEqual(['abc\n']);
    expect(rawLines('a\nb\nc').map((l) => l.text)).toEqual(['a\n', 'b\n', 'c']);
  });

  it('sinceSeconds, then tailLines; timestamps as RFC3339Nano (trailing zeros dropped)', () => {
    const lines = parseCriLines(FILE);
    const now = Date.parse('2026-11-27T04:00:03Z');
    expect(selectLines(lines, { follow: false, previous: false, timestamps: false, tailLines: 2 }, now).map((l) => l.text)).toEqual(['partial\n', 'line 3\n']);
    expect(selectLines(lines, { follow: false, previous: false, timestamps: false, sinceSeconds: 2 }, now).map((l) => l.text)).toEqual(['partial\n', 'line 3\n']);
    expect(selectLines(lines, { follow: false, previous: false, timestamps: false, tailLines: 0 }, now)).toEqual([]);
    expect(lines.map((l) => formatLine(l, true))).toEqual([
      '2026-11-27T04:00:00.1Z line 1\n',
      '2026-11-27T04:00:01.5Z partial\n',
      '2026-11-27T04:00:02.123456789Z line 3\n',
    ]);
    expect(formatLine({ time: '2026-11-27T04:00:00.000000000Z', stream: 'stdout', text: 'x\n' }, true)).toBe('2026-11-27T04:00:00Z x\n');
    expect(formatLine(lines[0] ?? { time: '', stream: 'stdout', text: '' }, false)).toBe('line 1\n');
  });

  it('reads the query as the kubelet does (a negative tailLines is all; a bad number is refused)', () => {
    expect(parseLogOptions(new URLSearchParams('follow=true&tailLines=10&timestamps=true&limitBytes=5&sinceSeconds=60&previous=false'))).toEqual({
      follow: true,
      previous: false,
      timestamps: true,
      tailLines: 10,
      limitBytes: 5,
      sinceSeconds: 60,
    });
    expect(parseLogOptions(new URLSearchParams('tailLines=-1'))).toEqual({ follow: false, previous: false, timestamps: false });
    expect(() => parseLogOptions(new URLSearchParams('limitBytes=lots'))).toThrow('limitBytes: "lots" must be a whole number of at least 1');
  });
});
