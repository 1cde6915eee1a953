import { describe, expect, it } from 'vitest';
import { exitOf, firstHealthyMs, formatScript, parseScript, phaseAt, ScriptError, withFirstPhase } from '../../src/simulate/script.js';

describe('behaviour scripts', () => {
  it('parses phases; the last lasts for ever; formats back canonically', () => {
    const s = parseScript('down:35s, slow(2s):1m30s,fail:500ms,hang');
    expect(s.map((p) => p.state.kind)).toEqual(['down', 'slow', 'fail', 'hang']);
    expect(s.map((p) => p.durationMs)).toEqual([35_000, 90_000, 500, Infinity]);
    expect(formatScript(s)).toBe('down:35s,slow(2s):1m30s,fail:500ms,hang');
    expect(formatScript(parseScript('up:10'))).toBe('up');
  });

  it('fail(N): an HTTP status from 400 to 599, formatted back; anything else refused with the fix', () => {
    const s = parseScript('fail(503):5s,up');
    expect(s[0]?.state).toEqual({ kind: 'fail', code: 503 });
    expect(formatScript(s)).toBe('fail(503):5s,up');
    for (const bad of ['fail(200)', 'fail(600)', 'fail(5x3)', 'fail()']) {
      expect(() => parseScript(bad), bad).toThrow(/write fail\(N\) with the HTTP status N from 400 to 599/);
    }
  });

  it('finds the phase in force and the exit', () => {
    const s = parseScript('down:10s,up:20s,exit(3)');
    expect(phaseAt(s, 0).phase.state.kind).toBe('down');
    expect(phaseAt(s, 9_999).phase.state.kind).toBe('down');
    expect(phaseAt(s, 10_000)).toMatchObject({ phase: { state: { kind: 'up' } }, startMs: 10_000 });
    expect(exitOf(s)).toEqual({ atMs: 30_000, code: 3 });
    expect(exitOf(parseScript('up'))).toBeUndefined();
  });

  it('knows when a script first answers healthy within a timeout', () => {
    expect(firstHealthyMs(parseScript('down:40s,up'), 1000)).toBe(40_000);
    expect(firstHealthyMs(parseScript('slow(5s):10s,up'), 1000)).toBe(10_000);
    expect(firstHealthyMs(parseScript('slow(500ms):10s,up'), 1000)).toBe(0);
    expect(firstHealthyMs(parseScript('down:10s,exit(1)'), 1000)).toBeUndefined();
  });

  it('varies the first phase for --sweep', () => {
    expect(formatScript(withFirstPhase(parseScript('down:40s,up'), 12_000))).toBe('down:12s,up');
  });

  it.each([
    ['', 'empty phase'],
    ['down:30s,,up', 'empty phase'],
    ['sleepy', 'unknown state "sleepy"'],
    ['down:-1s,up', 'bad duration "-1s"'],
    ['down:0s,up', 'bad duration "0s"'],
    ['down,up', 'needs a duration'],
    ['exit(1),up', 'must be the last phase'],
    ['exit(1):5s', 'takes no duration'],
    ['exit(300)', 'bad exit code'],
    ['slow(soon)', 'bad duration in "slow(soon)"'],
  ])('rejects %j (%s)', (text, message) => {
    expect(() => parseScript(text)).toThrow(ScriptError);
    expect(() => parseScript(text)).toThrow(message);
  });
});

describe('redirect(URL)', () => {
  it('parses with and without a duration, URL ports included, and formats back', () => {
    const script = parseScript('redirect(http://login.example:8443/x):30s,up');
    expect(script.map((p) => p.state)).toEqual([{ kind: 'redirect', location: 'http://login.example:8443/x' }, { kind: 'up' }]);
    expect(formatScript(script)).toBe('redirect(http://login.example:8443/x):30s,up');
    expect(parseScript('redirect(https://a.example/)')[0]?.durationMs).toBe(Infinity);
  });

  it('refuses a URL that is not absolute http(s), saying how to write it', () => {
    expect(() => parseScript('redirect(/healthz)')).toThrow(ScriptError);
    expect(() => parseScript('redirect(/healthz)')).toThrow('write redirect(URL) with an absolute http(s) URL of another host');
  });
});
