import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';

/**
 * A redis-server of the test's own on `port` (no persistence), so a test may stop and restart it
 * without disturbing the machine's shared Redis.
 */

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export async function startPrivateRedis(port: number): Promise<ChildProcess> {
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  while (!(await accepting(port))) {
    if (redis.exitCode !== null) throw new Error(`redis-server exited (${redis.exitCode})`);
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((done) => setTimeout(done, 100));
  }
  return redis;
}

export async function stopPrivateRedis(
  redis: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (redis.exitCode !== null || redis.signalCode !== null) return;
  const exited = new Promise((done) => redis.once('exit', done));
  redis.kill(signal);
  await exited;
}
