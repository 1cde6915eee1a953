import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { ResultsManager } from '../../src/prober/results.js';
import type { ResultUpdate } from '../../src/prober/types.js';

const pod: Pod = { metadata: { name: 'testPod', uid: 'pOd_UiD' } };

function collect(m: ResultsManager): ResultUpdate[] {
  const seen: ResultUpdate[] = [];
  m.subscribe((u) => seen.push(u));
  return seen;
}

describe('ResultsManager', () => {
  it('T1 cache operations: get, set, remove', () => {
    const m = new ResultsManager();
    expect(m.get('unset')).toBeUndefined();
    m.set('set', 'success', pod);
    expect(m.get('set')).toBe('success');
    expect(m.size).toBe(1);
    m.remove('set');
    expect(m.get('set')).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it('T2 updates only on new or changed values, in order; D8 remove emits nothing', () => {
    const m = new ResultsManager();
    const seen = collect(m);
    m.set('foo', 'success', pod);
    m.set('bar', 'failure', pod);
    m.set('foo', 'success', pod);
    m.set('bar', 'failure', pod);
    m.set('foo', 'failure', pod);
    m.set('bar', 'success', pod);
    m.remove('foo');
    expect(seen).toEqual([
      { containerID: 'foo', result: 'success', podUID: 'pOd_UiD' },
      { containerID: 'bar', result: 'failure', podUID: 'pOd_UiD' },
      { containerID: 'foo', result: 'failure', podUID: 'pOd_UiD' },
      { containerID: 'bar', result: 'success', podUID: 'pOd_UiD' },
    ]);
  });

  it('a value set again after remove is new and notifies', () => {
    const m = new ResultsManager();
    const seen = collect(m);
    m.set('foo', 'success', pod);
    m.remove('foo');
    m.set('foo', 'success', pod);
    expect(seen).toHaveLength(2);
  });

  it('calls listeners synchronously, in subscription order, after the cache changed', () => {
    const m = new ResultsManager();
    const order: string[] = [];
    m.subscribe((u) => order.push(`a:${u.result}:${m.get(u.containerID)}`));
    m.subscribe((u) => order.push(`b:${u.result}:${m.get(u.containerID)}`));
    m.set('x', 'failure', pod);
    expect(order).toEqual(['a:failure:failure', 'b:failure:failure']);
  });

  it('unsubscribe stops delivery to that listener only', () => {
    const m = new ResultsManager();
    const a: ResultUpdate[] = [];
    const b: ResultUpdate[] = [];
    const offA = m.subscribe((u) => a.push(u));
    m.subscribe((u) => b.push(u));
    m.set('x', 'success', pod);
    offA();
    offA();
    m.set('x', 'failure', pod);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(2);
  });

  it('delivers updates in order to every listener even when a listener sets a value', () => {
    const m = new ResultsManager();
    const a: string[] = [];
    const b: string[] = [];
    m.subscribe((u) => {
      a.push(`${u.containerID}=${u.result}`);
      if (u.containerID === 'x') m.set('y', 'success', pod);
    });
    m.subscribe((u) => b.push(`${u.containerID}=${u.result}`));
    m.set('x', 'failure', pod);
    expect(a).toEqual(['x=failure', 'y=success']);
    expect(b).toEqual(['x=failure', 'y=success']);
  });

  it('a throwing listener neither undoes the write nor starves later listeners', () => {
    const errors: unknown[] = [];
    const m = new ResultsManager({ onListenerError: (e) => errors.push(e) });
    const seen = [] as ResultUpdate[];
    m.subscribe(() => {
      throw new Error('boom');
    });
    m.subscribe((u) => seen.push(u));
    expect(() => m.set('x', 'success', pod)).not.toThrow();
    expect(m.get('x')).toBe('success');
    expect(seen).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  it('updates() yields only updates from the call on, in order', async () => {
    const m = new ResultsManager();
    m.set('before', 'success', pod);
    const it = m.updates();
    m.set('a', 'success', pod);
    m.set('a', 'success', pod);
    m.set('b', 'failure', pod);
    expect((await it.next()).value).toEqual({ containerID: 'a', result: 'success', podUID: 'pOd_UiD' });
    expect((await it.next()).value).toEqual({ containerID: 'b', result: 'failure', podUID: 'pOd_UiD' });
    const pending = it.next();
    m.set('c', 'unknown', pod);
    expect((await pending).value).toEqual({ containerID: 'c', result: 'unknown', podUID: 'pOd_UiD' });
    await it.return?.();
  });

  it('updates() works with for await and independent iterators', async () => {
    const m = new ResultsManager();
    const first = m.updates();
    const second = m.updates();
    m.set('a', 'success', pod);
    m.set('a', 'failure', pod);
    const got: string[] = [];
    for await (const u of first) {
      got.push(u.result);
      if (got.length === 2) break; // calls return()
    }
    expect(got).toEqual(['success', 'failure']);
    expect((await second.next()).value?.result).toBe('success');
    await second.return?.();
  });

  it('return() releases the iterator: it unsubscribes, drops its buffer and ends pending next()', async () => {
    const m = new ResultsManager();
    const it = m.updates();
    const pending = it.next();
    const it2 = m.updates();
    m.set('a', 'success', pod); // resolves `pending`, buffers one in it2
    await pending;
    const waiting = it.next();
    await it.return?.();
    await expect(waiting).resolves.toEqual({ value: undefined, done: true });
    await it2.return?.();
    await expect(it2.next()).resolves.toEqual({ value: undefined, done: true });
    // Nothing is buffered for abandoned iterators any more: no listener remains.
    expect(m.subscriberCount).toBe(0);
    m.set('a', 'failure', pod);
    await expect(it.next()).resolves.toEqual({ value: undefined, done: true });
  });
});
