/**
 * Fuzzing the upload-service's path and query inputs, as fuzz.test.ts does the API's:
 * its documented operations outside /api/v1 that take path or query parameters (today
 * `GET /files/{key}?token=`), read from the same OpenAPI document. The app runs on the records
 * harness's database, with a stored file whose key and signed link the generated requests often
 * use, so that hostile variants of them get past the first lookups. Same properties, sizes and
 * flags (FUZZ_RUNS, FUZZ_SEED, FUZZ_DEBUG) as fuzz.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signFileToken } from '@recordbase/server-kit/file-tokens';
import { createLogger } from '@recordbase/server-kit/logger';
import { LocalDiskStorage } from '@recordbase/storage';
import { Redis } from 'ioredis';
import supertest from 'supertest';
import { createApp as createUploadService } from '../../upload-service/src/app';
import { documentExamples, documentedRoutes, type Known } from './fuzz-routes';
import {
  type Figures,
  FUZZ,
  type FuzzOrigin,
  fuzzRoute,
  printFigures,
  ROUTE_TIMEOUT_MS,
  serveForFuzz,
} from './fuzz-run';
import { type Harness, startHarness } from './harness';

const { routes, components } = documentedRoutes((documented) => !documented.startsWith('/api/'));
const withInputs = routes.filter((route) => route.pathParams.length + route.queryParams.length > 0);

let h: Harness;
let scratch: string;
let redis: Redis;
let served: { origin: FuzzOrigin; close(): Promise<void> } | undefined;
let origin: FuzzOrigin;
let root: string;
let known: Known;

beforeAll(async () => {
  h = await startHarness({ statementTimeoutMs: FUZZ.statementTimeoutMs });
  root = h.bearer(h.rootKey);
  scratch = await mkdtemp(path.join(tmpdir(), 'fuzz-uploads-'));
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `test:${randomBytes(6).toString('hex')}:`,
    maxRetriesPerRequest: 1,
  });
  const storage = new LocalDiskStorage(path.join(scratch, 'files'));
  await storage.prepare();
  const uploads = createUploadService({
    db: h.db,
    redis,
    logger: createLogger('fuzz-uploads-test', 'silent'),
    storage,
    config: {
      ROOT_API_KEY: h.rootKey,
      FILE_TOKEN_SECRET: h.fileTokenSecret,
      // The fuzzer sends thousands of requests with one key, and of bad links, from one address:
      // no limit may step in before the last check downloads the file.
      RATE_LIMIT_PER_SECOND: 1_000_000,
      RATE_LIMIT_BURST: 1_000_000,
      REQUESTS_IN_FLIGHT_PER_KEY: 1_000_000,
      UPLOAD_BYTES_PER_SECOND_PER_KEY: 1024 ** 4,
      UPLOAD_BYTES_BURST_PER_KEY: 1024 ** 4,
      AUTH_FAILURE_BURST: 1_000_000,
    },
  });
  const created = await h.api
    .post('/api/v1/bases')
    .set('Authorization', root)
    .send({
      name: 'Uploads',
      tables: [
        {
          name: 'T',
          fields: [
            { name: 'Name', type: 'single_line_text' },
            { name: 'Files', type: 'attachments' },
          ],
        },
      ],
    });
  if (created.status !== 201) throw new Error(`the fixture base was refused: ${created.text}`);
  const uploaded = await supertest(uploads)
    .post('/fileupload')
    .set('Authorization', root)
    .set({ 'base-public-id': created.body.id, 'table-id': 'T', 'field-id': 'Files' })
    .attach('filepond', Buffer.from('hello, fuzzer\n'), { filename: 'notes.txt', contentType: 'text/plain' })
    .expect(201);
  const key = decodeURIComponent(new URL(uploaded.body.url).pathname.replace(/^\/files\//, ''));
  known = {
    key: [key],
    token: [
      signFileToken(h.fileTokenSecret, { fileKey: key, keyId: null }, 3600),
      signFileToken(h.fileTokenSecret, { fileKey: `${key}x`, keyId: null }, 3600),
      signFileToken(h.fileTokenSecret, { fileKey: key, keyId: null }, -10),
      signFileToken('not the secret', { fileKey: key, keyId: null }, 3600),
    ],
  };
  served = await serveForFuzz(uploads);
  origin = served.origin;
});

afterAll(async () => {
  await served?.close();
  redis?.disconnect();
  await h?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const figures = new Map<string, Figures>();
afterAll(() => {
  if (FUZZ.long) printFigures(figures);
});

test('the download route is among the routes read from the document', () => {
  expect(withInputs.map((route) => `${route.method.toUpperCase()} ${route.path}`)).toContain(
    'GET /files/{key}',
  );
});

describe.each(withInputs.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
  '%s',
  (name, route) => {
    test(
      'never a 5xx, never a hang, and nothing written when refused',
      async () => {
        const context = {
          components,
          fixture: Object.values(known).flat(),
          examples: documentExamples(),
          fieldTypes: {},
        };
        const counts: Figures = { requests: 0, durationMs: 0, statuses: {}, slowestMs: 0 };
        figures.set(name, counts);
        await fuzzRoute({ origin, authorization: root, db: h.db }, route, context, known, counts);
        // The file is still there and whole: nothing the fuzzer sent removed or spoiled it.
        const file = await supertest(`http://${origin.host}:${origin.port}`)
          .get(`/files/${encodeURI(known.key![0]!)}`)
          .set('Authorization', root);
        expect(file.status).toBe(200);
        expect(file.text).toBe('hello, fuzzer\n');
      },
      ROUTE_TIMEOUT_MS,
    );
  },
);
