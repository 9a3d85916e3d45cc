import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { OutsideRootError } from '../src/confined-path';
import { ensureStorageDir } from '../src/local-disk';
import { bytesOf, collect, localDiskFixture } from './storage-fixtures';

type Fixture = Awaited<ReturnType<typeof localDiskFixture>>;

describe('local disk storage', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await localDiskFixture();
  });
  afterEach(() => f.close());

  const text = (value: string) => Readable.from([Buffer.from(value)]);

  it('keeps each key as a file under the root, its segments as directories', async () => {
    await f.storage.put('files/ab/cd.png', text('png bytes'), 'image/png');
    expect(await readFile(join(f.root, 'files', 'ab', 'cd.png'), 'utf8')).toBe('png bytes');
    expect(await readdir(join(f.root, 'files', 'ab'))).toEqual(['cd.png']);
  });

  it('refuses a directory symlink inside the root that leads outside, writing and reading nothing there', async () => {
    await symlink(f.outside, join(f.root, 'escape'));
    const before = await f.surroundings();
    await expect(f.storage.put('escape/planted.txt', text('x'), 'text/plain')).rejects.toThrow(
      OutsideRootError,
    );
    await expect(f.storage.put('escape/deeper/planted.txt', text('x'), 'text/plain')).rejects.toThrow(
      OutsideRootError,
    );
    await expect(f.storage.get('escape/secret.txt')).rejects.toThrow(OutsideRootError);
    await expect(f.storage.stat('escape/secret.txt')).rejects.toThrow(OutsideRootError);
    await expect(f.storage.delete('escape/secret.txt')).rejects.toThrow(OutsideRootError);
    await expect(collect(f.storage.list('escape/'))).rejects.toThrow(OutsideRootError);
    // A full listing never follows the link.
    expect(await collect(f.storage.list(''))).toEqual([]);
    expect(await f.surroundings()).toEqual(before);
    expect(await readdir(f.outside)).toEqual(['secret.txt']);
  });

  it('refuses a file symlink inside the root that leads outside; deleting it removes only the link', async () => {
    await symlink(join(f.outside, 'secret.txt'), join(f.root, 'leak.txt'));
    await expect(f.storage.get('leak.txt')).rejects.toThrow(OutsideRootError);
    await expect(f.storage.stat('leak.txt')).rejects.toThrow(OutsideRootError);
    await f.storage.delete('leak.txt');
    expect(await readFile(join(f.outside, 'secret.txt'), 'utf8')).toBe('not for the storage');
    // A put replaces the link itself (rename does not follow it).
    await f.storage.put('leak.txt', text('stored'), 'text/plain');
    expect(await readFile(join(f.outside, 'secret.txt'), 'utf8')).toBe('not for the storage');
  });

  it('follows a symlink that stays inside the root', async () => {
    await mkdir(join(f.root, 'real'));
    await symlink(join(f.root, 'real'), join(f.root, 'alias'));
    await f.storage.put('alias/file.txt', text('inside'), 'text/plain');
    expect(await readFile(join(f.root, 'real', 'file.txt'), 'utf8')).toBe('inside');
    expect((await bytesOf(await f.storage.get('alias/file.txt'))).toString()).toBe('inside');
  });

  it('lists neither temporary files nor readiness probes nor anything that is not a key', async () => {
    await f.storage.put('dir/kept.txt', text('kept'), 'text/plain');
    await writeFile(join(f.root, 'dir', '.upload-0123.tmp'), 'partial');
    await writeFile(join(f.root, '.readyz-1-abc'), '');
    await writeFile(join(f.root, 'has space'), '');
    expect(await collect(f.storage.list(''))).toEqual(['dir/kept.txt']);
  });

  it('fails a put whose directory is taken by a file, leaving no temporary file', async () => {
    await f.storage.put('taken', text('a file'), 'text/plain');
    await expect(f.storage.put('taken/below', text('x'), 'text/plain')).rejects.toThrow();
    expect(await f.leftovers()).toEqual([]);
    expect(await f.storage.stat('taken/below')).toBeNull();
  });
});

describe('ensureStorageDir', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'upload-storage-'));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('creates a missing directory, parents included, and leaves it empty', async () => {
    const dir = join(scratch, 'a', 'b', 'files');
    await ensureStorageDir(dir);
    expect((await stat(dir)).isDirectory()).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a path under a file, naming it', async () => {
    const file = join(scratch, 'file');
    await writeFile(file, '');
    await expect(ensureStorageDir(join(file, 'files'))).rejects.toThrow(/STORAGE_DIR .*file/);
  });
});
