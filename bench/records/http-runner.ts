import { Pool } from 'undici';
import type { Op } from './measure';

/**
 * Operations against the records-api over HTTP/1.1 keep-alive: an undici Pool with one
 * connection per worker, no pipelining. Bodies are read fully as text, as a client would.
 */
export class HttpRunner {
  private readonly pool: Pool;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
    connections: number,
  ) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1 });
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
   * A request of another method with a JSON body (links: PATCH of one record), as post sends it;
   * `path` may depend on the worker (links: each its own record).
   */
  send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string | ((worker: number) => string),
    expectedStatus: number,
    body: (worker: number, sequence: number) => string,
    items = 0,
  ): Op {
    const headers = { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' };
    const pathOf = typeof path === 'string' ? () => path : path;
    return async (worker, sequence) => {
      const response = await this.pool.request({
        method,
        path: `/api/v1${pathOf(worker)}`,
        headers,
        // A GET (history's pages) sends no body.
        body: method === 'GET' ? undefined : body(worker, sequence),
      });
      const text = await response.body.text();
      if (response.statusCode !== expectedStatus) {
        throw new Error(`${method} ${pathOf(worker)}: status ${response.statusCode}: ${text.slice(0, 300)}`);
      }
      return { bytes: text.length, items };
    };
  }

  /** One request outside any measurement, answering the parsed body (to check the answers). */
  async once<T>(path: string, body: unknown): Promise<T> {
    return (await this.json<T>(path, body)).body;
  }

  /** One request answering the parsed body and its size: for operations made of several requests. */
  async json<T>(path: string, body: unknown): Promise<{ body: T; bytes: number }> {
    const response = await this.pool.request({
      method: 'POST',
      path: `/api/v1${path}`,
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300)
      throw new Error(`POST ${path}: status ${response.statusCode}: ${text.slice(0, 300)}`);
    return { body: JSON.parse(text) as T, bytes: text.length };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
