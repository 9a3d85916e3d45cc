import { gzipSync } from 'node:zlib';
import { databaseSnapshot, type Harness } from './harness';

/**
 * Hostile requests, sent raw: each names what it carries, and each must be refused with a 4xx and
 * the contract's error body while the database stays exactly as it was.
 */
export interface HostileRequest {
  name: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Under /api/v1; sent as is, so it may carry raw percent-escapes. */
  path: string;
  /** A string is sent as raw bytes of UTF-8 text; a Buffer as raw bytes; an object as JSON. */
  body?: string | Buffer | object;
  headers?: Record<string, string>;
  /** The exact status expected; any 4xx but 401/403/429 when omitted. */
  status?: number;
  /** Words the error message must contain, to show it names what was wrong. */
  mentions?: string | RegExp;
}

/** Sends one hostile request and checks the refusal and that nothing was written. */
export async function expectRefused(h: Harness, hostile: HostileRequest, authorization: string) {
  const before = await databaseSnapshot(h.db);
  let request = h.api[hostile.method](`/api/v1${hostile.path}`).set('Authorization', authorization);
  for (const [name, value] of Object.entries(hostile.headers ?? {})) request = request.set(name, value);
  const { body } = hostile;
  if (body !== undefined) {
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (!('content-type' in (hostile.headers ?? {})))
        request = request.set('content-type', 'application/json');
      // Raw bytes as they are: superagent would otherwise re-encode a Buffer as JSON.
      request = request
        .serialize((raw: unknown) => raw as string)
        .send(Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'));
    } else {
      request = request.send(body);
    }
  }
  const response = await request;
  if (hostile.status !== undefined) expect(response.status).toBe(hostile.status);
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  expect([401, 403, 429]).not.toContain(response.status);
  expect(response.body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
  if (hostile.mentions !== undefined) expect(response.body.error.message).toMatch(hostile.mentions);
  expect(await databaseSnapshot(h.db)).toEqual(before);
  return response;
}

/** `[[[[…]]]]` nested `depth` deep: what a recursive parser or validator would choke on. */
export const deeplyNested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

let bomb: Buffer | undefined;
/** 64 MB of spaces in 64 kB of gzip, made once. */
const gzipBomb = () => {
  bomb ??= gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
  return bomb;
};

/** Cases every route with a JSON body must refuse, whatever the route: transport-level hostility. */
export function transportCases(
  route: { method: 'post' | 'patch'; path: string },
  validBody: object,
): HostileRequest[] {
  const json = JSON.stringify(validBody);
  return [
    {
      name: 'a JSON body sent as text/plain',
      ...route,
      body: json,
      headers: { 'content-type': 'text/plain' },
      status: 415,
    },
    {
      name: 'a form-encoded body',
      ...route,
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      status: 415,
    },
    {
      name: 'a body without content-type',
      ...route,
      body: Buffer.from(json),
      headers: { 'content-type': '' },
      status: 415,
    },
    { name: 'malformed JSON', ...route, body: '{"a": ', status: 400, mentions: /Malformed JSON/ },
    {
      name: 'bytes that are not UTF-8',
      ...route,
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      status: 400,
      mentions: /UTF-8/,
    },
    {
      name: 'a latin1 charset',
      ...route,
      body: json,
      headers: { 'content-type': 'application/json; charset=latin1' },
      status: 415,
    },
    {
      name: 'gzip that does not decode',
      ...route,
      body: Buffer.from('not gzip at all'),
      headers: { 'content-encoding': 'gzip' },
      status: 400,
    },
    {
      name: 'deflate that does not decode',
      ...route,
      body: Buffer.from('not deflate'),
      headers: { 'content-encoding': 'deflate' },
      status: 400,
    },
    {
      name: 'brotli that does not decode',
      ...route,
      body: Buffer.from([0xff, 0xff, 0xff, 0xff]),
      headers: { 'content-encoding': 'br' },
      status: 400,
    },
    {
      name: 'an unknown content-encoding',
      ...route,
      body: json,
      headers: { 'content-encoding': 'compress' },
      status: 415,
    },
    {
      name: 'a gzip bomb (64 MB of spaces)',
      ...route,
      body: gzipBomb(),
      headers: { 'content-encoding': 'gzip' },
      status: 413,
    },
    { name: 'an array nested 20,000 deep', ...route, body: deeplyNested(20_000), status: 400 },
    { name: 'a JSON string instead of an object', ...route, body: '"hello"', status: 400 },
  ];
}
