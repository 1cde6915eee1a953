import { readdirSync, readFileSync } from 'node:fs';

/** Live children of this process that are a spawner process (spawn/spawner-main). */
export function spawnerPids(): number[] {
  const pids: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    let text = '';
    try {
      text = readFileSync(`/proc/self/task/${tid}/children`, 'latin1');
    } catch {
      continue;
    }
    for (const pid of text.trim().split(' ').filter(Boolean).map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('spawner-main')) pids.push(pid);
      } catch {
        // gone meanwhile
      }
    }
  }
  return pids;
}
