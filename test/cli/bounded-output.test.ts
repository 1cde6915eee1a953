import { describe, expect, it } from 'vitest';
import { boundedWriter } from '../../src/cli/run/bounded-output.js';

describe('boundedWriter', () => {
  it('drops whole lines past the backlog bound and says when dropping starts and how many were dropped', () => {
    let backlog = 0;
    const written: string[] = [];
    const notices: string[] = [];
    const write = boundedWriter((text) => written.push(text), () => backlog, (text) => notices.push(text), 10);
    write('a\n');
    backlog = 10;
    write('b\n');
    write('c\n');
    expect(notices).toEqual(['stdout is not being read: output lines are dropped until it is (at most 10 bytes wait for it)']);
    backlog = 0;
    write('d\n');
    expect(written).toEqual(['a\n', 'd\n']);
    expect(notices[1]).toBe('stdout is read again: 2 output lines were dropped meanwhile');
  });
});
