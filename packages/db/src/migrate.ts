import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const MIGRATIONS_DIR = join(__dirname, '..', 'migrations');

/** dbmate (a Go binary shipped in the npm package) talks lib/pq, which wants sslmode spelled out. */
export function dbmateUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.searchParams.has('sslmode') && ['localhost', '127.0.0.1', '::1', '[::1]'].includes(url.hostname)) {
    url.searchParams.set('sslmode', 'disable');
  }
  return url.toString();
}

/** Applies pending SQL migrations with dbmate, creating the database when it does not exist. */
export async function migrate(databaseUrl: string): Promise<void> {
  const cli = require.resolve('dbmate/dist/cli.js');
  const args = [
    cli,
    '--url',
    dbmateUrl(databaseUrl),
    '--migrations-dir',
    MIGRATIONS_DIR,
    '--no-dump-schema',
    'up',
  ];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`migrations failed (dbmate exit ${code}): ${output.trim()}`));
    });
  });
}
