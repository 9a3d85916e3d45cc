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

export interface MigrationReport {
  /** The database did not exist and was created. */
  createdDatabase: boolean;
  /** The migrations applied by this run, by file name, in order (none when it was up to date). */
  applied: string[];
}

/** Applies pending SQL migrations with dbmate, creating the database when it does not exist. */
export async function migrate(databaseUrl: string): Promise<MigrationReport> {
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
  const output = await new Promise<string>((resolve, reject) => {
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
      if (code === 0) resolve(output);
      else reject(new Error(`migrations failed (dbmate exit ${code}): ${output.trim()}`));
    });
  });
  // dbmate reports "Creating: <database>" and, per migration, "Applying: <file>" then "Applied: <file> in <time>".
  const lines = output.split('\n');
  return {
    createdDatabase: lines.some((line) => line.startsWith('Creating: ')),
    applied: lines
      .filter((line) => line.startsWith('Applied: '))
      .map((line) => line.slice(9).split(' ')[0] ?? ''),
  };
}

/** One line for an operator: which database (never its password), and what this run did to it. */
export function describeMigration(databaseUrl: string, report: MigrationReport): string {
  const url = new URL(databaseUrl);
  const user = url.username ? `${url.username}@` : '';
  const where = `${url.protocol}//${user}${url.host}${url.pathname}`;
  const count = report.applied.length;
  const what = count === 0 ? 'migrations up to date' : `${count} migration${count === 1 ? '' : 's'} applied`;
  return `database ${where}: ${report.createdDatabase ? 'created, ' : ''}${what}`;
}
