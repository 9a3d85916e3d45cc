import { isAbsolute, resolve } from 'node:path';
import { createStorage, LocalDiskStorage, S3Storage } from '@recordbase/storage';
import { loadConfig } from '../src/config';

/** Variables without a default. */
const required = { FILE_TOKEN_SECRET: 's'.repeat(32) };

describe('configuration', () => {
  it('defaults to port 3001, loopback (HOST) and an absolute storage dir', () => {
    const config = loadConfig(required);
    expect(config.PORT).toBe(3001);
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.ROOT_API_KEY).toBeUndefined();
    expect(isAbsolute(config.STORAGE_DIR)).toBe(true);
    expect(config.STORAGE_DIR).toBe(resolve('.data/files'));
  });

  it('reads PORT, HOST, ROOT_API_KEY and STORAGE_DIR', () => {
    const config = loadConfig({
      ...required,
      PORT: '4001',
      HOST: '0.0.0.0',
      ROOT_API_KEY: 'k'.repeat(32),
      STORAGE_DIR: 'relative/dir',
    });
    expect(config).toMatchObject({ PORT: 4001, HOST: '0.0.0.0', ROOT_API_KEY: 'k'.repeat(32) });
    expect(config.STORAGE_DIR).toBe(resolve('relative/dir'));
  });

  it('requires FILE_TOKEN_SECRET, which signs file links, naming it', () => {
    expect(() => loadConfig({})).toThrow(/FILE_TOKEN_SECRET/);
    expect(() => loadConfig({ FILE_TOKEN_SECRET: 'short' })).toThrow(/FILE_TOKEN_SECRET/);
  });

  it('names the variable that is wrong', () => {
    expect(() => loadConfig({ ...required, PORT: 'nope' })).toThrow(/PORT/);
    expect(() => loadConfig({ ...required, ROOT_API_KEY: 'short' })).toThrow(/ROOT_API_KEY/);
    expect(() => loadConfig({ ...required, STORAGE_DIR: '' })).toThrow(/STORAGE_DIR/);
  });
});

describe('STORAGE_QUOTA_BYTES_PER_DATABASE', () => {
  it('is no quota when unset or empty, and a whole positive number of bytes otherwise', () => {
    expect(loadConfig(required).STORAGE_QUOTA_BYTES_PER_DATABASE).toBeUndefined();
    expect(
      loadConfig({ ...required, STORAGE_QUOTA_BYTES_PER_DATABASE: '' }).STORAGE_QUOTA_BYTES_PER_DATABASE,
    ).toBeUndefined();
    expect(
      loadConfig({ ...required, STORAGE_QUOTA_BYTES_PER_DATABASE: '1073741824' })
        .STORAGE_QUOTA_BYTES_PER_DATABASE,
    ).toBe(1073741824);
    for (const wrong of ['0', '-1', '1.5', '10GB', '1e30']) {
      expect(() => loadConfig({ ...required, STORAGE_QUOTA_BYTES_PER_DATABASE: wrong })).toThrow(
        /STORAGE_QUOTA_BYTES_PER_DATABASE/,
      );
    }
  });
});

describe('UPLOAD_BYTES_PER_SECOND_PER_KEY and UPLOAD_BYTES_BURST_PER_KEY', () => {
  it('default to 8 MiB a second and 64 MiB at once, and take whole positive numbers of bytes', () => {
    const defaults = loadConfig(required);
    expect([defaults.UPLOAD_BYTES_PER_SECOND_PER_KEY, defaults.UPLOAD_BYTES_BURST_PER_KEY]).toEqual([
      8 * 1024 * 1024,
      64 * 1024 * 1024,
    ]);
    const set = loadConfig({
      ...required,
      UPLOAD_BYTES_PER_SECOND_PER_KEY: '1000',
      UPLOAD_BYTES_BURST_PER_KEY: '60000000',
    });
    expect([set.UPLOAD_BYTES_PER_SECOND_PER_KEY, set.UPLOAD_BYTES_BURST_PER_KEY]).toEqual([1000, 60000000]);
    for (const wrong of ['0', '-1', '1.5', '8MB']) {
      expect(() => loadConfig({ ...required, UPLOAD_BYTES_PER_SECOND_PER_KEY: wrong })).toThrow(
        /UPLOAD_BYTES_PER_SECOND_PER_KEY/,
      );
    }
  });

  it('refuses a burst too small for the largest upload, saying how large it must be', () => {
    expect(() => loadConfig({ ...required, UPLOAD_BYTES_BURST_PER_KEY: '52494335' })).toThrow(
      /UPLOAD_BYTES_BURST_PER_KEY.*must be at least 52494336 bytes, the largest upload/,
    );
  });
});

describe('storage configuration', () => {
  const s3 = {
    ...required,
    STORAGE_DRIVER: 's3',
    S3_ENDPOINT: 'http://127.0.0.1:9000',
    S3_BUCKET: 'recordbase-files',
    S3_ACCESS_KEY: 'access-key-id',
    S3_SECRET_KEY: 'very-secret-key-value',
  };

  it('defaults to the local disk driver, which needs no S3 variable', () => {
    const config = loadConfig(required);
    expect(config.STORAGE_DRIVER).toBe('local');
    expect(createStorage(config)).toBeInstanceOf(LocalDiskStorage);
    expect(createStorage(config).name).toBe('local');
  });

  it('builds the S3 driver from the S3 variables, the region defaulting to us-east-1', () => {
    const config = loadConfig(s3);
    expect(config.S3_REGION).toBe('us-east-1');
    const storage = createStorage(config);
    expect(storage).toBeInstanceOf(S3Storage);
    expect(storage.name).toBe('s3');
    expect(loadConfig({ ...required, ...s3, S3_REGION: 'eu-west-3' }).S3_REGION).toBe('eu-west-3');
  });

  it('gives the S3 driver one pool of S3_UPLOAD_BUFFERS part buffers, 4 by default', () => {
    expect((createStorage(loadConfig(s3)) as S3Storage).partPool.capacity).toBe(4);
    const storage = createStorage(loadConfig({ ...s3, S3_UPLOAD_BUFFERS: '2' })) as S3Storage;
    expect(storage.partPool.capacity).toBe(2);
    expect(storage.partPool.partSize).toBe(5 * 1024 * 1024);
    expect(() => loadConfig({ ...s3, S3_UPLOAD_BUFFERS: '0' })).toThrow(/S3_UPLOAD_BUFFERS/);
  });

  it('refuses STORAGE_DRIVER=s3 without S3_BUCKET, naming S3_BUCKET', () => {
    const { S3_BUCKET: _, ...withoutBucket } = s3;
    expect(() => loadConfig(withoutBucket)).toThrow(/S3_BUCKET: is required when STORAGE_DRIVER=s3/);
  });

  it.each(['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'])(
    'refuses STORAGE_DRIVER=s3 without %s, naming it',
    (name) => {
      const env: Record<string, string> = { ...s3 };
      delete env[name];
      expect(() => loadConfig(env)).toThrow(new RegExp(`${name}: is required`));
    },
  );

  it('refuses an unknown driver, a bad endpoint or bucket name, never echoing the secret key', () => {
    expect(() => loadConfig({ ...required, STORAGE_DRIVER: 'ftp' })).toThrow(/STORAGE_DRIVER/);
    for (const endpoint of ['127.0.0.1:9000', 'ftp://host', 'http://user:pw@host:9000', 'http://host/path']) {
      let message = '';
      try {
        loadConfig({ ...required, ...s3, S3_ENDPOINT: endpoint });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/S3_ENDPOINT/);
      expect(message).not.toContain(s3.S3_SECRET_KEY);
    }
    expect(() => loadConfig({ ...required, ...s3, S3_BUCKET: 'Not_A_Bucket' })).toThrow(/S3_BUCKET/);
    expect(() => loadConfig({ ...required, ...s3, S3_SECRET_KEY: '' })).toThrow(
      /S3_SECRET_KEY: must not be empty/,
    );
  });

  it('ignores the S3 variables with the local driver', () => {
    expect(() => loadConfig({ ...required, S3_BUCKET: 'whatever-bucket' })).not.toThrow();
  });
});
