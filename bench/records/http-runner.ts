import { Pool } from 'undici';
import type { Op } from './measure';

/**
 * Operations against the records-api over HTTP/1.1 keep-alive: an undici Pool with one
 * connection per worker, no pipelining. Bodies are read fully as text, as a client would. Paths
 * are under `prefix`: `/api/v1`, or `/v0` for the Airtable-compatible API (airtable-suite.ts).
 */
export class HttpRunner {
  private readonly pool: Pool;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    connections: number,
    private readonly prefix = '/api/v1',
  ) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1 });
  }

  /** GET without a body (history's pages, /v0's listings); `items` counted per request. */
  get(path: string, expectedStatus: number, items = 0): Op {
    return this.send('GET', path, expectedStatus, undefined, items);
  }

  /** POST a JSON body; `body` is called per request (fixed bodies can return the same string). */
  post(
    path: string,
    expectedStatus: number,
    body: (worker: number, sequence: number) => string,
    items = 0,
  ): Op {
    return this.send('POST', path, expectedStatus, body, items);
  }

  /**
   * A request of another method with a JSON body (links: PATCH of one record), as post sends it,
   * or without one (`body` undefined: a GET); `path` may depend on the worker (links: each its
   * own record).
   */
  send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string | ((worker: number) => string),
    expectedStatus: number,
    body: ((worker: number, sequence: number) => string) | undefined,
    items = 0,
  ): Op {
    const headers = this.headers(body !== undefined);
    const pathOf = typeof path === 'string' ? () => path : path;
    return async (worker, sequence) => {
      const response = await this.pool.request({
        method,
        path: `${this.prefix}${pathOf(worker)}`,
        headers,
        body: body?.(worker, sequence),
      });
      const text = await response.body.text();
      if (response.statusCode !== expectedStatus) {
        throw new Error(`${method} ${pathOf(worker)}: status ${response.statusCode}: ${text.slice(0, 300)}`);
      }
      return { bytes: text.length, items };
    };
  }

  /**
   * One request outside any measurement, answering the parsed body (to check the answers): a
   * POST of `body`, or a GET when there is none.
   */
  async once<T>(path: string, body?: unknown): Promise<T> {
    return (await this.json<T>(path, body)).body;
  }

  /** One request answering the parsed body and its size: for operations made of several requests. */
  async json<T>(path: string, body?: unknown): Promise<{ body: T; bytes: number }> {
    const method = body === undefined ? 'GET' : 'POST';
    const response = await this.pool.request({
      method,
      path: `${this.prefix}${path}`,
      headers: this.headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300)
      throw new Error(`${method} ${path}: status ${response.statusCode}: ${text.slice(0, 300)}`);
    return { body: JSON.parse(text) as T, bytes: text.length };
  }

  private headers(withBody: boolean): Record<string, string> {
    return {
      authorization: `Bearer ${this.apiKey}`,
      ...(withBody ? { 'content-type': 'application/json' } : {}),
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
