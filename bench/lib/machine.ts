import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

/**
 * What a suite's results say of where they were measured: the machine, the versions, and which
 * version of the sources under test ran. Each suite puts together its own `Machine` of these.
 */

const ROOT = join(__dirname, '..', '..');

/** The machine's cores, memory and system, and Node's version: the start of every suite's `Machine`. */
export interface Host {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
}

export function host(): Host {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
  };
}

/** The 1, 5 and 15 minute load averages now. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
}

/** sha256 over the sources under `dirs` (of the repository), and when the newest of them changed. */
export function sourceFingerprint(dirs: readonly string[]): string {
  const hash = createHash('sha256');
  let newest = 0;
  for (const dir of dirs) {
    const files = readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && !entry.parentPath.includes('generated'))
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();
    for (const file of files) {
      hash.update(file.slice(ROOT.length)).update(readFileSync(file));
      newest = Math.max(newest, statSync(file).mtimeMs);
    }
  }
  return `sha256 ${hash.digest('hex').slice(0, 12)} of ${dirs.join(', ')} (newest file changed ${new Date(newest).toISOString()})`;
}

/** A command's output, trimmed, or 'unknown' when it fails. */
function quiet(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** The commit checked out, and whether the sources under `dirs` differ from it. */
export function gitSha(dirs: readonly string[]): string {
  const dirty = quiet('git', ['status', '--porcelain', '--', ...dirs]);
  return `${quiet('git', ['rev-parse', '--short=12', 'HEAD'])}${dirty ? ' with uncommitted changes in the measured sources' : ''}`;
}

/** The filesystem `dir` is on. */
export function filesystemOf(dir: string): string {
  const fs = quiet('findmnt', ['-n', '-o', 'SOURCE,FSTYPE', '-T', dir]).split(/\s+/);
  return `${dir} on ${fs[0] ?? '?'} (${fs[1] ?? '?'})`;
}

/** redis-server's version, as redis-cli reports it; 'unknown' without redis-cli. */
export function redisVersion(): string {
  try {
    const info = execFileSync('redis-cli', ['info', 'server'], { encoding: 'utf8' });
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
