import { request } from 'undici';

/** A minimal JSON client for the setup calls (creating the database, tables and companies). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  get authorization(): string {
    return `Bearer ${this.apiKey}`;
  }

  async call<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: T }> {
    const response = await request(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: this.authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    return { status: response.statusCode, json: (text ? JSON.parse(text) : null) as T };
  }

  /** Like call, but anything other than `expected` throws with the body. */
  async expect<T>(
    expected: number,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const { status, json } = await this.call<T>(method, path, body);
    if (status !== expected) {
      throw new Error(
        `${method} ${path}: expected ${expected}, got ${status}: ${JSON.stringify(json).slice(0, 500)}`,
      );
    }
    return json;
  }
}
