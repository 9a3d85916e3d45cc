import { mkdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

export const errorCode = (error: unknown): string | undefined =>
  (error as NodeJS.ErrnoException | null)?.code;

/** Whether `path` is `root` itself or below it (both absolute, symlinks already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A symlink (or a swapped directory) in the storage tree points elsewhere: never followed. */
export class OutsideRootError extends Error {
  constructor() {
    // No path in the message: it may reach a client through an error response.
    super('storage path leads outside the storage root');
    this.name = 'OutsideRootError';
  }
}

/**
 * The real path of the directory `dirs` (key segments) below `realRoot`, checking each component
 * after resolving symlinks, so that none leads out of the root: key validation already refuses
 * `..`, and this is the defence in depth against a symlink planted in the tree. With `create`,
 * missing directories are made one at a time, each only inside a directory already checked
 * (a recursive mkdir would follow a symlink before we could look at it); without, a missing
 * component gives null.
 */
export async function confinedDir(realRoot: string, dirs: string[], create: boolean): Promise<string | null> {
  let current = realRoot;
  for (const name of dirs) {
    const next = join(current, name);
    let real = await realpath(next).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT' || (!create && errorCode(error) === 'ENOTDIR')) return null;
      throw error;
    });
    if (real === null) {
      if (!create) return null;
      // EEXIST: a concurrent put made it, or a dangling symlink sits there (realpath then fails).
      await mkdir(next).catch((error: unknown) => {
        if (errorCode(error) !== 'EEXIST') throw error;
      });
      real = await realpath(next);
    }
    if (!isInside(realRoot, real)) throw new OutsideRootError();
    current = real;
  }
  return current;
}

/** The real path of the file `segments` names below `realRoot`, or null when absent; never outside. */
export async function confinedFile(realRoot: string, segments: string[]): Promise<string | null> {
  const dir = await confinedDir(realRoot, segments.slice(0, -1), false);
  if (dir === null) return null;
  const real = await realpath(join(dir, segments.at(-1)!)).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return null;
    throw error;
  });
  if (real !== null && !isInside(realRoot, real)) throw new OutsideRootError();
  return real;
}
