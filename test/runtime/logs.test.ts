import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { containerLogPath, openContainerLog } from '../../src/runtime/logs.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'probelet-logs-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('containerLogPath', () => {
  it('follows the kubelet /var/log/pods layout', () => {
    expect(containerLogPath('/run/p', { namespace: 'ns', name: 'web', uid: 'u1' }, 'app', 3)).toBe(
      '/run/p/ns_web_u1/app/3.log',
    );
  });
});

describe('openContainerLog', () => {
  it('writes everything to the file and keeps only the last bytes in memory', () => {
    const path = join(tempDir(), 'ns_p_u', 'c', '0.log');
    const log = openContainerLog(path, 10);
    log.write(Buffer.from('0123456789'));
    expect(log.tail()).toBe('0123456789');
    log.write(Buffer.from('abc'));
    log.write(Buffer.from('defghijklmnop'));
    expect(log.tail()).toBe('ghijklmnop');
    log.close();
    expect(readFileSync(path, 'utf8')).toBe('0123456789abcdefghijklmnop');
    expect(log.tail()).toBe('ghijklmnop');
    log.write(Buffer.from('!'));
    expect(readFileSync(path, 'utf8')).toBe('0123456789abcdefghijklmnop');
  });

  it('appends to an existing file of the same attempt', () => {
    const path = join(tempDir(), '0.log');
    writeFileSync(path, 'before\n');
    const log = openContainerLog(path, 100);
    log.write(Buffer.from('after\n'));
    log.close();
    expect(readFileSync(path, 'utf8')).toBe('before\nafter\n');
    expect(log.tail()).toBe('after\n');
  });

  it('drops a UTF-8 character whose first bytes fell out of the tail, and only then', () => {
    const log = openContainerLog(join(tempDir(), '0.log'), 4);
    log.write(Buffer.from('é€'));
    // 'é€' is 2 + 3 bytes; the last 4 bytes hold half of 'é' and all of '€'.
    expect(log.tail()).toBe('€');
    log.close();
    const fresh = openContainerLog(join(tempDir(), '1.log'), 8);
    fresh.write(Buffer.from('€x'));
    expect(fresh.tail()).toBe('€x');
    fresh.close();
  });

  it('keeps no tail with a zero limit', () => {
    const log = openContainerLog(join(tempDir(), '0.log'), 0);
    log.write(Buffer.from('abc'));
    expect(log.tail()).toBe('');
    log.close();
  });

  it('throws when the file cannot be created', () => {
    const file = join(tempDir(), 'plain-file');
    writeFileSync(file, '');
    expect(() => openContainerLog(join(file, 'c', '0.log'))).toThrow(/ENOTDIR|EEXIST/);
  });
});
