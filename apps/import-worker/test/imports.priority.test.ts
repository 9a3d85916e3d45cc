import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The import worker runs at a lower CPU priority, every thread of it: Linux keeps a niceness per
 * thread, and V8's threads start before the worker's code runs.
 */

/** Each thread's niceness: field 19 of /proc/<pid>/task/<tid>/stat. */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const afterName = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!;
    return Number(afterName.split(' ')[16]);
  });
}

it('lowers every thread of the process, those started before and after', async () => {
  const script = `
    const { lowerOwnPriority } = require(${JSON.stringify(join(__dirname, '../src/priority.ts'))});
    lowerOwnPriority(10);
    // A thread started afterwards: libuv's pool, for a file read.
    require('node:fs').readFile('/proc/self/stat', () => {
      process.stdout.write('ready\\n');
    });
    setTimeout(() => {}, 5000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: join(__dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((ready, failed) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) ready();
      });
      child.on('exit', (code) => failed(new Error(`the child exited with ${code}`)));
    });
    const niceness = threadNiceness(child.pid!);
    expect(niceness.length).toBeGreaterThan(4);
    expect(new Set(niceness)).toEqual(new Set([10]));
  } finally {
    child.kill();
  }
});
