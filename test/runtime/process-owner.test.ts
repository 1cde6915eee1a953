/**
 * The process runtime's container record (probelet node): what a killed agent left running is
 * killed at the next start, and only that — a pid whose start time differs (reused) is spared.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openContainerRecord, removeRecordedLeftovers } from '../../src/runtime/process-owner.js';
import { eventually, isAlive } from '../helpers/processes.js';

const dirs: string[] = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sleeper(): number {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  child.unref();
  children.push(child.pid ?? 0);
  return child.pid ?? 0;
}

describe('process runtime: the container record of a node', () => {
  it('kills the recorded containers still running, spares a pid whose start time changed, and removes the record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-owner-'));
    dirs.push(dir);
    const path = join(dir, 'record');
    const left = sleeper();
    const gone = sleeper();
    const reused = sleeper();
    const record = openContainerRecord(path);
    record.add(left);
    record.add(gone);
    record.remove(gone);
    // The agent is killed here: the record stays. A pid recorded with another start time is not ours.
    writeFileSync(path, `${readFileSync(path, 'utf8').trim()}\n${reused} 1\n`);
    expect(removeRecordedLeftovers(path)).toBe(1);
    expect(await eventually(() => !isAlive(left), 5000)).toBe(true);
    expect(isAlive(gone)).toBe(true);
    expect(isAlive(reused)).toBe(true);
    expect(existsSync(path)).toBe(false);
    expect(removeRecordedLeftovers(path)).toBe(0);
  });

  it('clear() removes the record (a clean stop leaves nothing to clean)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probelet-owner-'));
    dirs.push(dir);
    const path = join(dir, 'record');
    const record = openContainerRecord(path);
    record.add(sleeper());
    expect(existsSync(path)).toBe(true);
    record.clear();
    expect(existsSync(path)).toBe(false);
  });
});
