import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReaderLimits } from '@recordbase/import-worker/readers';
import type { ImportContext } from '@recordbase/import-worker/run-context';
import {
  type ImportWorker,
  type ImportWorkerOptions,
  startImportWorker,
} from '@recordbase/import-worker/worker';
import { createEventPublisher } from '@recordbase/queues';
import { createLogger } from '@recordbase/server-kit/logger';
import { LocalDiskStorage } from '@recordbase/storage';
import type { Harness } from './harness';

/**
 * What an import test needs beside the API: uploads as upload-service stores them (a file in
 * storage and its uploaded_files row), and an import worker on the harness's queue.
 */

export const CSV = 'text/csv';
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export interface ImportFixture {
  storage: LocalDiskStorage;
  /** Stores `content` as an import upload of `apiKeyId` (root: null) and answers its s3Key. */
  upload(
    fileName: string,
    content: string | Buffer,
    mimeType?: string,
    apiKeyId?: string | null,
  ): Promise<string>;
  /** What a run of the import worker is given: the fixture's storage unless another is given. */
  context(options?: WorkerOptions): ImportContext;
  startWorker(options?: WorkerOptions, worker?: Pick<ImportWorkerOptions, 'importTime'>): ImportWorker;
  stopWorker(): Promise<void>;
  /** Polls the import until it has finished (succeeded or failed). */
  finished(databaseId: string, importId: string, timeoutMs?: number): Promise<ImportStatusBody>;
  close(): Promise<void>;
}

export interface WorkerOptions {
  progressEveryRows?: number;
  limits?: ReaderLimits;
  storage?: ImportContext['storage'];
}

export interface ImportStatusBody {
  id: string;
  status: string;
  tableId: string | null;
  rowsImported: number;
  rowsTotal: number | null;
  skippedColumns: string[];
  errors: { row: number | null; column: string | null; message: string }[];
}

export async function importFixture(h: Harness): Promise<ImportFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'rb-imports-'));
  const storage = new LocalDiskStorage(dir);
  await storage.prepare();
  const logger = createLogger('import-worker-test', 'silent');
  const events = createEventPublisher({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: h.queuePrefix,
    logger,
  });
  let worker: ImportWorker | null = null;
  const fixture: ImportFixture = {
    storage,
    async upload(fileName, content, mimeType = CSV, apiKeyId = null) {
      const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      const key = `imports/${randomUUID()}/${fileName.replace(/[^A-Za-z0-9._-]/g, '_')}`;
      await storage.put(key, Readable.from([bytes]), mimeType);
      await h.db.prisma.uploadedFile.create({
        data: {
          id: randomUUID(),
          key,
          kind: 'import',
          fileName,
          size: BigInt(bytes.length),
          mimeType,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          apiKeyId,
        },
      });
      return key;
    },
    context: (options = {}) => ({ db: h.db, storage, events, logger, ...options }),
    startWorker(options = {}, workerOptions = {}) {
      worker = startImportWorker({
        ...workerOptions,
        ctx: fixture.context(options),
        redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        prefix: h.queuePrefix,
        sweepEveryMs: 500,
      });
      return worker;
    },
    async stopWorker() {
      await worker?.close();
      worker = null;
    },
    async finished(databaseId, importId, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await h.api
          .get(`/api/v1/bases/${databaseId}/imports/${importId}`)
          .set('Authorization', h.bearer(h.rootKey))
          .expect(200);
        if (res.body.status === 'succeeded' || res.body.status === 'failed') return res.body;
        if (Date.now() > deadline) throw new Error(`import ${importId} still ${res.body.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      await fixture.stopWorker();
      await events.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}
