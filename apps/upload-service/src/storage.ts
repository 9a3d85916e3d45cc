import { randomBytes } from 'node:crypto';
import { mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code ?? (error instanceof Error ? error.message : String(error));
}

/** Creates the storage directory at start-up when it is missing; a failure names the directory. */
export async function ensureStorageDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new Error(`Cannot create STORAGE_DIR ${dir} (${reason(error)}). Create it or set STORAGE_DIR.`);
  }
  await checkStorageWritable(dir).catch((error: Error) => {
    throw new Error(`${error.message}: ${dir}. Fix its permissions or set STORAGE_DIR.`);
  });
}

/**
 * Readiness of the storage: the directory exists and a file can be written to it and removed.
 * Writing a probe (rather than asking `access`) also catches read-only mounts and a root user,
 * for whom permission bits say yes. The message names the problem but not the path, since
 * `/readyz` answers anyone.
 */
export async function checkStorageWritable(dir: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(dir);
  } catch (error) {
    throw new Error(`storage directory is missing or unreachable (${reason(error)})`);
  }
  if (!info.isDirectory()) throw new Error('storage path is not a directory');
  const probe = join(dir, `.readyz-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, '');
  } catch (error) {
    throw new Error(`storage directory is not writable (${reason(error)})`);
  }
  await unlink(probe).catch(() => {});
}
