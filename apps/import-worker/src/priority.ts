import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Imports are background work: at a lower CPU priority the worker parses and converts files on
 * the cycles the services answering requests leave, rather than taking a core from them when they
 * share a machine (an import of a large or hostile file runs for seconds at a time).
 *
 * Linux keeps a niceness per thread: V8's and libuv's threads started before this call keep
 * theirs unless each is set too (/proc/self/task names them); threads started later inherit the
 * niceness of the thread that starts them.
 */
export function lowerOwnPriority(niceness: number): void {
  setPriority(niceness);
  let threads: string[] = [];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return; // not Linux: the process's one priority is set
  }
  for (const thread of threads) {
    try {
      setPriority(Number(thread), niceness);
    } catch {
      // A thread that ended meanwhile.
    }
  }
}
