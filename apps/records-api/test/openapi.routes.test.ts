import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@recordbase/server-kit/logger';
import { LocalDiskStorage } from '@recordbase/storage';
import { Redis } from 'ioredis';
import { createApp as createUploadService } from '../../upload-service/src/app';
import { openApiDocument } from '../src/http/openapi/document';
import { type Harness, startHarness } from './harness';
import { servedRoutes } from './route-table';

/**
 * The reference covers exactly the routes the two services serve: every route of the real Express
 * apps appears in the document, and every operation of the document is a route of one of them.
 */

function documentedRoutes(): string[] {
  const methods = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'] as const;
  return Object.entries(openApiDocument().paths ?? {}).flatMap(([documentedPath, item]) =>
    methods
      .filter((method) => item?.[method] !== undefined)
      .map((method) => `${method.toUpperCase()} ${documentedPath}`),
  );
}

describe('the routes of the reference', () => {
  let h: Harness;
  let scratch: string;
  let recordsApi: string[];
  let uploadService: string[];
  // Never connected: building the app only keeps it for its readiness check.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });

  beforeAll(async () => {
    h = await startHarness();
    scratch = await mkdtemp(path.join(tmpdir(), 'openapi-routes-'));
    recordsApi = servedRoutes(h.app);
    // Upload-service as its own main builds it; the walk only reads its routers.
    const uploads = createUploadService({
      db: h.db,
      redis,
      logger: createLogger('openapi-routes-test', 'silent'),
      storage: new LocalDiskStorage(path.join(scratch, 'files')),
      config: { ROOT_API_KEY: h.rootKey, FILE_TOKEN_SECRET: h.fileTokenSecret },
    });
    uploadService = servedRoutes(uploads);
  });
  afterAll(async () => {
    redis.disconnect();
    await h.close();
    await rm(scratch, { recursive: true, force: true });
  });

  test('the walk finds the routes of both services (it sees through mounted routers)', () => {
    expect(recordsApi).toContain('POST /api/v1/bases/{databaseId}/tables/{tableId}/records/list');
    expect(recordsApi).toContain('GET /healthz');
    expect(uploadService).toContain('POST /fileupload');
    expect(uploadService).toContain('GET /files/{key}');
    expect(recordsApi.length).toBeGreaterThan(40);
  });

  test('every Express route of records-api and upload-service is in the document', () => {
    const documented = new Set(documentedRoutes());
    const missing = [...new Set([...recordsApi, ...uploadService])].filter((route) => !documented.has(route));
    expect(missing).toEqual([]);
  });

  test('every operation of the document is a route of one of them', () => {
    const served = new Set([...recordsApi, ...uploadService]);
    const invented = documentedRoutes().filter((route) => !served.has(route));
    expect(invented).toEqual([]);
  });

  test('a route added to an app without documenting it would be caught', () => {
    const before = servedRoutes(h.app).length;
    h.app.get('/api/v1/undocumented', (_req, res) => {
      res.end();
    });
    const after = servedRoutes(h.app);
    expect(after.length).toBe(before + 1);
    const documented = new Set(documentedRoutes());
    expect(after.filter((route) => !documented.has(route))).toEqual(['GET /api/v1/undocumented']);
  });
});
