import { errorBodySchema } from '@recordbase/contracts/errors';
import type { z } from 'zod';
import { RecordbaseApiError, RecordbaseNetworkError, RecordbaseResponseError } from './errors';
import {
  DEFAULT_RETRY_POLICY,
  delayAfterStatus,
  parseRetryAfter,
  RETRIED_STATUSES,
  type RetryPolicy,
  sleep,
} from './retry';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface TransportOptions {
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** Another fetch (a test's, or one with a proxy agent); the global fetch by default. */
  fetch?: typeof fetch;
  /** How to wait between attempts; a test records the waits asked for instead of sleeping them. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RequestSpec<Schema extends z.ZodType> {
  method: HttpMethod;
  url: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Made afresh for each attempt: a FormData's stream is spent once sent. */
  body?: () => NonNullable<RequestInit['body']>;
  headers?: Record<string, string>;
  /** What a success answers, checked before it is returned. */
  schema: Schema;
  /** Changes nothing, so a failed connection may be retried (see retry.ts). */
  idempotent?: boolean;
  signal?: AbortSignal;
}

/** Per-call options every method takes. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Sends requests with the key, retries as the policy says, and turns answers into values or errors. */
export class Transport {
  readonly policy: RetryPolicy;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: TransportOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.#apiKey = options.apiKey;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    if (!(this.policy.maxAttempts >= 1)) throw new TypeError('retry.maxAttempts must be 1 or more');
    // Bound, since some browsers refuse a fetch called as another object's method.
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#sleep = options.sleep ?? sleep;
  }

  async request<Schema extends z.ZodType>(spec: RequestSpec<Schema>): Promise<z.output<Schema>> {
    const response = await this.send(spec);
    return parseAnswer(response, spec.schema, describe(spec));
  }

  /** The successful response itself (a download), after the same retries and error handling. */
  async send(spec: Omit<RequestSpec<z.ZodType>, 'schema'>): Promise<Response> {
    const request = describe(spec);
    for (let attempt = 1; ; attempt += 1) {
      let response: Response;
      try {
        response = await this.#fetch(spec.url, this.#init(spec));
      } catch (error) {
        if (spec.signal?.aborted) throw error;
        if (spec.idempotent && attempt < this.policy.maxAttempts) {
          await this.#sleep(delayAfterStatus(this.policy, attempt, undefined) ?? 0, spec.signal);
          continue;
        }
        const reason = error instanceof Error ? error.message : String(error);
        throw new RecordbaseNetworkError(`${request} failed: ${reason}`, request, error);
      }
      if (response.ok) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (RETRIED_STATUSES.has(response.status)) {
        const wait = delayAfterStatus(this.policy, attempt, retryAfterMs);
        if (wait !== undefined) {
          await response.body?.cancel();
          await this.#sleep(wait, spec.signal);
          continue;
        }
      }
      throw await apiError(response, request, retryAfterMs);
    }
  }

  #init(spec: Omit<RequestSpec<z.ZodType>, 'schema'>): RequestInit {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, ...spec.headers };
    let body: RequestInit['body'];
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.json);
    } else if (spec.body) {
      body = spec.body();
    }
    return {
      method: spec.method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(spec.signal ? { signal: spec.signal } : {}),
    };
  }
}

/** `POST /api/v1/bases/…`, without the query string (which may hold a file token). */
function describe(spec: { method: string; url: string }): string {
  const url = new URL(spec.url);
  return `${spec.method} ${url.origin}${url.pathname}`;
}

async function readJson(response: Response, request: string): Promise<unknown> {
  const text = await response.text();
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new RecordbaseResponseError(
      `${request} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      response.status,
      request,
    );
  }
}

async function parseAnswer<Schema extends z.ZodType>(
  response: Response,
  schema: Schema,
  request: string,
): Promise<z.output<Schema>> {
  const body = await readJson(response, request);
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(body)'}: ${issue.message}`)
    .join('; ');
  throw new RecordbaseResponseError(
    `${request} answered ${response.status} with a body the contract does not allow: ${issues}`,
    response.status,
    request,
  );
}

async function apiError(
  response: Response,
  request: string,
  retryAfterMs: number | undefined,
): Promise<Error> {
  let body: unknown;
  try {
    body = await readJson(response, request);
  } catch (error) {
    return error as Error;
  }
  const parsed = errorBodySchema.safeParse(body);
  if (!parsed.success) {
    return new RecordbaseResponseError(
      `${request} answered ${response.status} without an error body: ${JSON.stringify(body)?.slice(0, 200)}`,
      response.status,
      request,
    );
  }
  const { code, message } = parsed.data.error;
  return new RecordbaseApiError(code, message, response.status, retryAfterMs, request);
}
