import type { StorageConfig } from './env';
import { LocalDiskStorage } from './local-disk';
import type { StorageDriver } from './object-storage';
import { PartPool } from './part-pool';
import { DEFAULT_PART_SIZE, S3Storage } from './s3';

export { OutsideRootError } from './confined-path';
export type { StorageConfig } from './env';
export { assertStorageKey } from './keys';
export { LocalDiskStorage } from './local-disk';
export * from './object-storage';
export { PartPool } from './part-pool';
export { S3Storage } from './s3';

/** The driver STORAGE_DRIVER names; `main` then runs its `prepare()` once before serving. */
export function createStorage(config: StorageConfig): StorageDriver {
  if (config.STORAGE_DRIVER === 'local') return new LocalDiskStorage(config.STORAGE_DIR);
  const required = (name: 'S3_ENDPOINT' | 'S3_BUCKET' | 'S3_ACCESS_KEY' | 'S3_SECRET_KEY'): string => {
    // The env schema already insists; this narrows the types and guards hand-built configs.
    const value = config[name];
    if (!value) throw new Error(`${name} is required when STORAGE_DRIVER=s3`);
    return value;
  };
  return new S3Storage({
    endpoint: required('S3_ENDPOINT'),
    bucket: required('S3_BUCKET'),
    accessKey: required('S3_ACCESS_KEY'),
    secretKey: required('S3_SECRET_KEY'),
    region: config.S3_REGION,
    // One pool for the process: main makes one storage.
    partPool: new PartPool(DEFAULT_PART_SIZE, config.S3_UPLOAD_BUFFERS),
  });
}
