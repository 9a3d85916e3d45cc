import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uploadRoutes } from '@recordbase/contracts/uploads';
import { Client as MinioClient } from 'minio';
import { Pool } from 'undici';
import type { Service } from '../lib/stack';
import { type Child, startChild } from './children';
import type { Target } from './config';
import { FILE_NAME, MIME_TYPE, type Payload } from './payload';
import { S3_BUCKET, S3_KEYS, type Stack, startUploadService } from './services';

/**
 * Each target made ready for one case in a directory of its own (its processes fresh, so that
 * the RSS before the case is the same for every case): the operation the load repeats, the
 * processes to watch, and the check made after the warm-up that the bytes arrived intact.
 */

const run = promisify(execFile);

export interface PreparedTarget {
  /** The processes whose RSS and CPU are watched, by role; the first is the receiving one. */
  pids: Record<string, number>;
  /** One upload (copy, PUT) of the file; rejects unless it was stored whole. */
  operation(index: number): Promise<void>;
  /** After the warm-up: reads one stored copy back and compares it with the file. */
  verify(): Promise<void>;
  stop(): Promise<void>;
  /** What the services printed, for a failed case. */
  output(): string;
}

export interface TargetContext {
  target: Target;
  concurrency: number;
  payload: Payload;
  stack: Stack;
  /** This case's scratch directory (removed by the caller). */
  dir: string;
}

const sha256Of = async (chunks: AsyncIterable<Buffer>) => {
  const hash = createHash('sha256');
  for await (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
};

function expectSame(what: string, sha256: string, payload: Payload): void {
  if (sha256 !== payload.sha256) throw new Error(`${what}: the stored bytes differ from the file`);
}

async function copyTarget(context: TargetContext): Promise<PreparedTarget> {
  const { payload, dir } = context;
  const copyPath = (index: number) => join(dir, `copy-${index}.png`);
  return {
    pids: {},
    async operation(index) {
      // `sync FILE` fsyncs that one file (GNU coreutils), as the drivers' flush does.
      await run('cp', [payload.path, copyPath(index)]);
      await run('sync', [copyPath(index)]);
    },
    async verify() {
      expectSame('cp', await sha256Of(createReadStream(copyPath(0))), payload);
    },
    stop: async () => {},
    output: () => '',
  };
}

async function streamTarget(context: TargetContext): Promise<PreparedTarget> {
  const { payload, dir, concurrency } = context;
  const server = await startChild('stream-server-child.ts', [dir]);
  const pool = new Pool(`http://127.0.0.1:${server.port}`, { connections: concurrency });
  return {
    pids: { 'stream server': server.pid },
    async operation() {
      const response = await pool.request({
        path: '/',
        method: 'POST',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(payload.file.length),
        },
        body: payload.file,
      });
      const text = await response.body.text();
      if (response.statusCode !== 201 || (JSON.parse(text) as { size: number }).size !== payload.file.length)
        throw new Error(`stream: ${response.statusCode} ${text.slice(0, 300)}`);
    },
    // The server's files are checked by size above; their bytes are the socket's.
    verify: async () => {},
    async stop() {
      await pool.destroy();
      await server.stop();
    },
    output: () => '',
  };
}

async function s3rverTarget(context: TargetContext): Promise<PreparedTarget> {
  const { payload, dir } = context;
  const s3rver = await startChild('s3rver-child.ts', [dir]);
  const client = new MinioClient({
    endPoint: '127.0.0.1',
    port: s3rver.port,
    useSSL: false,
    ...S3_KEYS,
    region: 'us-east-1',
    pathStyle: true,
  });
  await client.makeBucket(S3_BUCKET, 'us-east-1');
  return {
    pids: { s3rver: s3rver.pid },
    async operation(index) {
      await client.putObject(S3_BUCKET, `direct/${index}/${FILE_NAME}`, payload.file, payload.file.length, {
        'Content-Type': MIME_TYPE,
      });
    },
    async verify() {
      expectSame(
        's3rver',
        await sha256Of(await client.getObject(S3_BUCKET, `direct/0/${FILE_NAME}`)),
        payload,
      );
    },
    stop: () => s3rver.stop(),
    output: () => '',
  };
}

async function uploadServiceTarget(context: TargetContext): Promise<PreparedTarget> {
  const { payload, dir, concurrency, stack } = context;
  let s3rver: Child | undefined;
  let service: Service | undefined;
  try {
    if (context.target === 's3') {
      s3rver = await startChild('s3rver-child.ts', [dir]);
      service = await startUploadService(stack, {
        driver: 's3',
        endpoint: `http://127.0.0.1:${s3rver.port}`,
      });
    } else {
      const storageDir = join(dir, 'files');
      await mkdir(storageDir);
      service = await startUploadService(stack, { driver: 'local', dir: storageDir });
    }
  } catch (error) {
    await s3rver?.stop();
    throw error;
  }
  const pool = new Pool(`http://127.0.0.1:${service.port}`, { connections: concurrency });
  const authorization = `Bearer ${stack.rootKey}`;
  let firstUrl: string | undefined;
  const running = service;
  return {
    pids: { 'upload-service': service.pid, ...(s3rver ? { s3rver: s3rver.pid } : {}) },
    async operation() {
      const response = await pool.request({
        path: uploadRoutes.attachment,
        method: 'POST',
        headers: {
          authorization,
          'base-public-id': stack.target.baseId,
          'table-id': stack.target.tableId,
          'field-id': stack.target.fieldId,
          'content-type': payload.multipartType,
          'content-length': String(payload.multipart.length),
        },
        body: payload.multipart,
      });
      const text = await response.body.text();
      const answer =
        response.statusCode === 201
          ? (JSON.parse(text) as { url: string; size: number; mimeType: string })
          : null;
      if (!answer || answer.size !== payload.file.length || answer.mimeType !== MIME_TYPE)
        throw new Error(`${context.target}: ${response.statusCode} ${text.slice(0, 300)}`);
      firstUrl ??= answer.url;
    },
    async verify() {
      if (!firstUrl) throw new Error(`${context.target}: nothing uploaded to verify`);
      const response = await pool.request({
        path: new URL(firstUrl).pathname,
        method: 'GET',
        headers: { authorization },
      });
      if (response.statusCode !== 200) throw new Error(`download: ${response.statusCode}`);
      expectSame(`${context.target} download`, await sha256Of(response.body), payload);
    },
    async stop() {
      await pool.destroy();
      await running.stop();
      await s3rver?.stop();
    },
    output: () => running.output(),
  };
}

export function prepareTarget(context: TargetContext): Promise<PreparedTarget> {
  switch (context.target) {
    case 'cp':
      return copyTarget(context);
    case 'stream':
      return streamTarget(context);
    case 's3rver':
      return s3rverTarget(context);
    case 'local':
    case 's3':
      return uploadServiceTarget(context);
  }
}

/**
 * The contract's limit read literally: what the upload-service (local disk) answers for a file of
 * exactly `payload.file.length` bytes, sent like every measured upload.
 */
export async function probeStatus(stack: Stack, payload: Payload, dir: string): Promise<number> {
  const storageDir = join(dir, 'files');
  await mkdir(storageDir);
  const service = await startUploadService(stack, { driver: 'local', dir: storageDir });
  const pool = new Pool(`http://127.0.0.1:${service.port}`);
  try {
    const response = await pool.request({
      path: uploadRoutes.attachment,
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.rootKey}`,
        'base-public-id': stack.target.baseId,
        'table-id': stack.target.tableId,
        'field-id': stack.target.fieldId,
        'content-type': payload.multipartType,
        'content-length': String(payload.multipart.length),
      },
      body: payload.multipart,
    });
    await response.body.text();
    return response.statusCode;
  } finally {
    await pool.destroy();
    await service.stop();
  }
}
