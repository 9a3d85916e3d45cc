import { fork } from 'node:child_process';
import { join } from 'node:path';

/**
 * The helpers of the ceilings and of the S3 driver that run in their own processes (so that their
 * CPU and memory are neither the load generator's nor the upload-service's): s3rver and the raw
 * stream server. Each is forked with this process's loader flags (tsx), reports its port over IPC
 * and exits when the parent disconnects, so that it cannot outlive a benchmark that died.
 */

export type ChildMessage = { type: 'ready'; port: number };

export interface Child {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

export function startChild(
  entry: 's3rver-child.ts' | 'stream-server-child.ts',
  args: string[],
): Promise<Child> {
  const child = fork(join(__dirname, entry), args, {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        done();
      });
      if (child.connected) child.disconnect();
      else child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${entry} exited with code ${code} before listening`)));
    child.once('message', (message: ChildMessage) => {
      child.removeAllListeners('exit');
      resolve({ pid: child.pid ?? 0, port: message.port, stop });
    });
  });
}
