/**
 * The node's pod source as a reflector, over a scripted client (the seam the agent talks to
 * the API through) on the FakeClock: list then watch from the list's version, `410 Gone` and
 * failures re-list and reconcile (pods gone are removed, unchanged ones are not delivered
 * again), a failed watch waits the reflector's back-off, close stops everything.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeClients } from '../../src/node/kube.js';
import { startPodSource } from '../../src/node/pod-source.js';
import { FakeClock } from '../../src/util/clock.js';

interface WatchCall {
  params: Record<string, unknown>;
  event(type: string, object: unknown): void;
  done(err: unknown): void;
  aborted: boolean;
}

function pod(name: string, rv: string): Pod {
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv }, spec: { containers: [] } };
}

function scripted() {
  const lists: Array<() => { metadata: { resourceVersion: string }; items: Pod[] }> = [];
  const watches: WatchCall[] = [];
  let listCalls = 0;
  const clients = {
    server: 'https://example',
    core: {
      listPodForAllNamespaces: async (params: { fieldSelector: string }) => {
        listCalls++;
        expect(params.fieldSelector).toBe('spec.nodeName=n1');
        const next = lists.shift();
        if (!next) throw Object.assign(new Error('connect ECONNREFUSED'), { statusCode: undefined });
        return next();
      },
    },
    watch: {
      watch: async (_path: string, params: Record<string, unknown>, cb: (t: string, o: unknown) => void, done: (e: unknown) => void) => {
        const controller = new AbortController();
        const call: WatchCall = { params, event: cb, done, aborted: false };
        controller.signal.addEventListener('abort', () => (call.aborted = true));
        watches.push(call);
        return controller;
      },
    },
  } as unknown as KubeClients;
  return { clients, lists, watches, listCalls: () => listCalls };
}

describe('startPodSource', () => {
  it('lists, watches from the list’s version, and on 410 Gone re-lists and reconciles without delivering unchanged pods again', async () => {
    const clock = new FakeClock(0);
    const s = scripted();
    const seen: string[] = [];
    s.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [pod('a', '5'), pod('b', '6')] }));
    const source = startPodSource({
      clients: s.clients,
      nodeName: 'n1',
      clock,
      random: () => 0,
      log: () => undefined,
      handlers: { upsert: (p) => seen.push(`upsert ${p.metadata?.name}@${p.metadata?.resourceVersion}`), remove: (uid) => seen.push(`remove ${uid}`) },
    });
    await source.synced;
    await clock.advance(0);
    expect(seen).toEqual(['upsert a@5', 'upsert b@6']);
    expect(s.watches[0]?.params).toMatchObject({ fieldSelector: 'spec.nodeName=n1', resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 });

    s.watches[0]?.event('ADDED', pod('c', '11'));
    s.watches[0]?.event('BOOKMARK', { metadata: { resourceVersion: '12' } });
    s.watches[0]?.event('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    // b was deleted while our version expired; a and c did not change.
    s.lists.push(() => ({ metadata: { resourceVersion: '20' }, items: [pod('a', '5'), pod('c', '11')] }));
    await clock.advance(1000);
    s.watches[0]?.done(null);
    await clock.advance(0);
    await clock.advance(0);
    expect(seen).toEqual(['upsert a@5', 'upsert b@6', 'upsert c@11', 'remove uid-b']);
    expect(s.watches[1]?.params.resourceVersion).toBe('20');
    source.close();
  });

  it('a watch that fails waits the back-off (0.8 s, doubling) before re-listing; a watch the server ends resumes from the last version', async () => {
    const clock = new FakeClock(0);
    const s = scripted();
    const logs: string[] = [];
    s.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [] }));
    const source = startPodSource({ clients: s.clients, nodeName: 'n1', clock, random: () => 0, log: (l) => logs.push(l), handlers: { upsert: () => undefined, remove: () => undefined } });
    await source.synced;
    await clock.advance(0);
    s.watches[0]?.event('MODIFIED', pod('a', '15'));
    await clock.advance(60_000);
    s.watches[0]?.done(null);
    await clock.advance(0);
    expect(s.watches[1]?.params.resourceVersion).toBe('15');
    expect(s.listCalls()).toBe(1);

    s.watches[1]?.done(Object.assign(new Error('socket hang up'), {}));
    await clock.advance(799);
    expect(s.listCalls()).toBe(1);
    // The re-list fails too (nothing scripted): the next wait is 1.6 s.
    await clock.advance(1);
    expect(s.listCalls()).toBe(2);
    await clock.advance(1599);
    expect(s.listCalls()).toBe(2);
    s.lists.push(() => ({ metadata: { resourceVersion: '30' }, items: [] }));
    await clock.advance(1);
    expect(s.listCalls()).toBe(3);
    await clock.advance(0);
    expect(s.watches[2]?.params.resourceVersion).toBe('30');
    expect(logs[0]).toBe('node n1: the watch of pods failed: socket hang up (retrying in 0.8 s)');
    expect(logs[1]).toBe('node n1: the list of pods failed: connect ECONNREFUSED (retrying in 1.6 s)');
    source.close();
    expect(s.watches[2]?.aborted).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('hands pods on without metadata.managedFields (nothing on a node reads them; a fleet keeps thousands of pods)', async () => {
    const clock = new FakeClock(0);
    const s = scripted();
    const seen: Pod[] = [];
    const managed = (p: Pod): Pod => ({ ...p, metadata: { ...p.metadata, labels: { app: 'x' }, managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }] } });
    s.lists.push(() => ({ metadata: { resourceVersion: '10' }, items: [managed(pod('a', '5'))] }));
    const source = startPodSource({ clients: s.clients, nodeName: 'n1', clock, random: () => 0, log: () => undefined, handlers: { upsert: (p) => seen.push(p), remove: () => undefined } });
    await source.synced;
    await clock.advance(0);
    s.watches[0]?.event('ADDED', managed(pod('b', '11')));
    expect(seen.map((p) => p.metadata)).toEqual([
      { name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '5', labels: { app: 'x' } },
      { name: 'b', namespace: 'ns', uid: 'uid-b', resourceVersion: '11', labels: { app: 'x' } },
    ]);
    source.close();
  });
});
