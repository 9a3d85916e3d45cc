import { performance } from 'node:perf_hooks';
import type { AttemptErrorKind } from '@recordbase/db';
import {
  type Cidr,
  RefusedAddressError,
  type Resolver,
  resolveAndVet,
  systemResolver,
} from '@recordbase/server-kit/ssrf';
import { type Agent, request } from 'undici';
import { newAgent, type ReceiverConnections } from './connections';
import { parseRetryAfter } from './retry-schedule';

/**
 * One HTTP POST of one webhook attempt, with the SSRF guard: resolve, check every address, connect
 * only to those addresses, follow no redirect, read at most a small part of the answer, and give up
 * at the deadline. Knows nothing of the database or of queues.
 */

export type { AttemptErrorKind };

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  errorKind: AttemptErrorKind | null;
  error: string | null;
  /** The first bytes of the response body (UTF-8, at most `excerptBytes`). */
  responseExcerpt: string | null;
  /** From `Retry-After`, for a failed response that carries one. */
  retryAfterMs?: number;
}

export interface SendOptions {
  /** Deadline of the whole attempt: DNS, connection, request and response headers. */
  timeoutMs: number;
  /** Deadline of the TCP/TLS connection alone; defaults to the attempt's. */
  connectTimeoutMs?: number;
  allowedCidrs: readonly Cidr[];
  /** Response bytes read at most; the rest is discarded and the connection closed. */
  maxResponseBytes?: number;
  excerptBytes?: number;
  resolve?: Resolver;
  userAgent?: string;
  /**
   * Keep-alive connections and cached address checks shared by attempts; without it, each attempt
   * checks the addresses and opens its own connection.
   */
  connections?: ReceiverConnections;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const DEFAULT_EXCERPT_BYTES = 1024;

class DeadlineError extends Error {}

/** Text safe for a PostgreSQL text column (no NUL) and of bounded length. */
export function cleanText(text: string, maxLength = 1000): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL cannot be stored in PostgreSQL text
  const withoutNul = text.replace(/\u0000/g, '');
  return withoutNul.length > maxLength ? `${withoutNul.slice(0, maxLength)}…` : withoutNul;
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error && cause !== error) {
    const causeCode = (cause as { code?: string }).code;
    return `${error.message}${causeCode ? ` (${causeCode})` : ` (${cause.message})`}`;
  }
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

function isTimeoutError(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'ETIMEDOUT' ||
    (error instanceof Error && error.name === 'TimeoutError')
  );
}

export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const excerptBytes = options.excerptBytes ?? DEFAULT_EXCERPT_BYTES;
  const failure = (
    errorKind: AttemptErrorKind,
    error: string,
    statusCode: number | null = null,
  ): SendResult => ({
    ok: false,
    statusCode,
    durationMs: elapsed(),
    errorKind,
    error: cleanText(error),
    responseExcerpt: null,
  });

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return failure('invalid_url', 'the webhook URL cannot be parsed');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return failure('invalid_url', `the ${target.protocol} scheme is not delivered to`);
  }

  const controller = new AbortController();
  let timedOut = false;
  let rejectDeadline: (error: Error) => void = () => {};
  const deadline = new Promise<never>((_resolve, reject) => {
    rejectDeadline = reject;
  });
  deadline.catch(() => {});
  const timer = setTimeout(() => {
    timedOut = true;
    const error = new DeadlineError(`no answer within ${options.timeoutMs} ms`);
    controller.abort(error);
    rejectDeadline(error);
  }, options.timeoutMs);

  let oneOffAgent: Agent | undefined;
  try {
    const resolve = options.resolve ?? systemResolver;
    const addresses = await Promise.race([
      options.connections
        ? options.connections.vet(target.hostname, options.allowedCidrs, resolve)
        : resolveAndVet(target.hostname, options.allowedCidrs, resolve),
      deadline,
    ]);
    const agentSettings = {
      connectTimeoutMs: options.connectTimeoutMs ?? options.timeoutMs,
      timeoutMs: options.timeoutMs,
    };
    let agent: Agent;
    if (options.connections) {
      agent = options.connections.agentFor(target, addresses, agentSettings);
    } else {
      oneOffAgent = newAgent(addresses, agentSettings, 1);
      agent = oneOffAgent;
    }
    const response = await request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': options.userAgent ?? 'recordbase-webhooks/1',
        ...headers,
      },
      body,
      dispatcher: agent,
      signal: controller.signal,
    });
    const statusCode = response.statusCode;
    // Read a bounded part of the answer; a body that trickles past the deadline is cut off, the
    // status (which arrived in time) stands.
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        chunks.push(buffer.subarray(0, Math.max(0, maxResponseBytes - received)));
        received += buffer.length;
        if (received >= maxResponseBytes) break;
      }
    } catch {
      // Keep what arrived.
    } finally {
      response.body.destroy();
    }
    const excerptBuffer = Buffer.concat(chunks).subarray(0, excerptBytes);
    const responseExcerpt =
      excerptBuffer.length > 0 ? cleanText(excerptBuffer.toString('utf8'), excerptBytes) : null;
    const durationMs = elapsed();
    if (statusCode >= 200 && statusCode < 300) {
      return { ok: true, statusCode, durationMs, errorKind: null, error: null, responseExcerpt };
    }
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    const redirect = statusCode >= 300 && statusCode < 400;
    return {
      ok: false,
      statusCode,
      durationMs,
      errorKind: 'http',
      error: redirect ? `answered ${statusCode}; redirects are not followed` : `answered ${statusCode}`,
      responseExcerpt,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  } catch (error) {
    if (error instanceof RefusedAddressError) return failure('ssrf', error.message);
    if (timedOut || error instanceof DeadlineError || isTimeoutError(error)) {
      return failure('timeout', `no answer within ${options.timeoutMs} ms`);
    }
    const code = (error as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return failure('network', `cannot resolve ${target.hostname} (${code})`);
    }
    return failure('network', describeNetworkError(error));
  } finally {
    clearTimeout(timer);
    if (oneOffAgent) void oneOffAgent.destroy().catch(() => {});
  }
}
