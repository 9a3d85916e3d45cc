import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { loadConfig } from '../src/config';
import { ensureStorageDir } from '../src/storage';

describe('configuration', () => {
  it('defaults to port 3001, all interfaces and an absolute storage dir', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3001);
    expect(config.HOST).toBe('0.0.0.0');
    expect(config.ROOT_API_KEY).toBeUndefined();
    expect(isAbsolute(config.STORAGE_DIR)).toBe(true);
    expect(config.STORAGE_DIR).toBe(resolve('.data/files'));
  });

  it('reads PORT, HOST, ROOT_API_KEY and STORAGE_DIR', () => {
    const config = loadConfig({
      PORT: '4001',
      HOST: '127.0.0.1',
      ROOT_API_KEY: 'k'.repeat(32),
      STORAGE_DIR: 'relative/dir',
    });
    expect(config).toMatchObject({ PORT: 4001, HOST: '127.0.0.1', ROOT_API_KEY: 'k'.repeat(32) });
    expect(config.STORAGE_DIR).toBe(resolve('relative/dir'));
  });

  it('names the variable that is wrong', () => {
    expect(() => loadConfig({ PORT: 'nope' })).toThrow(/PORT/);
    expect(() => loadConfig({ ROOT_API_KEY: 'short' })).toThrow(/ROOT_API_KEY/);
    expect(() => loadConfig({ STORAGE_DIR: '' })).toThrow(/STORAGE_DIR/);
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
