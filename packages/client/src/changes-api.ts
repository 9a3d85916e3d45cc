import { changesPageSchema, LATEST_CURSOR } from '@recordbase/contracts/changes';
import { type ChangeEvent, changeEventSchema } from '@recordbase/contracts/events';
import type { WebhookEventType } from '@recordbase/contracts/webhooks';
import { RecordbaseApiError, RecordbaseNetworkError, RecordbaseResponseError } from './errors';
import { joinUrl, withQuery } from './paths';
import { backoffMs, sleep } from './retry';
import type { CallOptions, Transport } from './transport';

/** Which events of the database: of one table (id or name), of some types; every one by default. */
export interface ChangesFilterOptions {
  /** The `cursor` of an earlier answer or an event's `cursor`, or `latest`; the oldest event kept by default. */
  cursor?: string;
  /** Only the events of this table (its id, or its name while it exists). */
  tableId?: string;
  /** Only events of these types; a type the key's scopes do not carry is 403. */
  types?: readonly WebhookEventType[];
}

/** A page of the feed: `limit` 1 to 1000 events (100 by default) after `cursor`. */
export interface ListChangesOptions extends ChangesFilterOptions, CallOptions {
  limit?: number;
}

/** The stream follows the feed until the loop stops (`break`, `return`) or `signal` aborts. */
export type StreamChangesOptions = ChangesFilterOptions & CallOptions;

/** One event of the stream, and the cursor after it: pass it back to go on after this event. */
export interface StreamedChange {
  cursor: string;
  event: ChangeEvent;
}

/** What the stream waits before reconnecting until the server's `retry:` says otherwise. */
export const DEFAULT_RECONNECT_MS = 1000;

/**
 * The change feed of a database: its events in commit order, read page by page from a cursor
 * (`list`) or followed live over Server-Sent Events (`stream`), which reconnects by itself.
 */
export class ChangesApi {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
    /** How to wait before reconnecting; a test records the waits instead of sleeping them. */
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<void> = sleep,
  ) {}

  #url(baseId: string, ...rest: string[]) {
    return joinUrl(this.apiUrl, 'bases', baseId, 'changes', ...rest);
  }

  /**
   * One page: `{changes, cursor, hasMore}`. Pass `cursor` back to read on: a reader following it
   * gets every committed event exactly once. `cursor: 'latest'` answers no changes, only where the
   * feed ends now; a cursor retention has passed is a 410 `CURSOR_EXPIRED` error.
   */
  list(baseId: string, options: ListChangesOptions = {}) {
    return this.transport.request({
      method: 'GET',
      url: withQuery(this.#url(baseId), {
        cursor: options.cursor,
        limit: options.limit,
        tableId: options.tableId,
        types: options.types?.join(','),
      }),
      schema: changesPageSchema,
      idempotent: true,
      signal: options.signal,
    });
  }

  /**
   * The events from `cursor` on, caught up and then live, as `{cursor, event}`: an async iterable
   * to read with `for await`. When the connection drops or the server ends it (a client too slow is
   * dropped), it reconnects on its own with `Last-Event-ID` set to the last cursor received, after
   * the server's `retry:` wait, doubled for each reconnection in a row that heard nothing, up to the
   * retry policy's `maxDelayMs`; a failed connection or a 502, 503 or 504 while reconnecting is
   * waited out the same way. An error answer before a stream starts is thrown as usual (a 410
   * `CURSOR_EXPIRED` when retention passed the cursor; 429 and 503 are first retried as every
   * request is). Leaving the loop closes the connection; aborting `signal` closes it and throws
   * the signal's reason.
   */
  async *stream(
    baseId: string,
    options: StreamChangesOptions = {},
  ): AsyncGenerator<StreamedChange, void, undefined> {
    const { signal } = options;
    // `latest` is resolved to the cursor it stands for now: resent after a drop before any event,
    // it would otherwise mean a later place and skip what committed in between.
    let resumeFrom =
      options.cursor === LATEST_CURSOR
        ? (await this.list(baseId, { cursor: LATEST_CURSOR, tableId: options.tableId, signal })).cursor
        : options.cursor;
    const url = withQuery(this.#url(baseId, 'stream'), {
      cursor: resumeFrom,
      tableId: options.tableId,
      types: options.types?.join(','),
    });
    const request = `GET ${url.split('?')[0]}`;
    let retryMs = DEFAULT_RECONNECT_MS;
    /** Connections in a row that delivered nothing (no event, no keep-alive). */
    let quiet = 0;
    for (let connection = 1; ; connection += 1) {
      if (connection > 1) {
        quiet += 1;
        // At least 1 ms to double: a server asking `retry: 0` gets no busy loop of reconnections.
        const baseDelayMs = Math.max(retryMs, 1);
        await this.wait(backoffMs({ ...this.transport.policy, baseDelayMs }, quiet), signal);
      }
      const link = linkedController(signal);
      try {
        let response: Response;
        try {
          response = await this.transport.send({
            method: 'GET',
            url,
            headers: {
              accept: 'text/event-stream',
              // It wins over the address's `cursor`, as for an EventSource reconnecting.
              ...(connection > 1 && resumeFrom !== undefined ? { 'last-event-id': resumeFrom } : {}),
            },
            idempotent: true,
            signal: link.signal,
          });
        } catch (error) {
          if (connection > 1 && !signal?.aborted && isPassing(error)) continue;
          throw error;
        }
        const type = response.headers.get('content-type') ?? '';
        if (!/^text\/event-stream\b/i.test(type) || !response.body) {
          throw new RecordbaseResponseError(
            `${request} answered ${response.status} with ${type || 'no content type'}, not an event stream`,
            response.status,
            request,
          );
        }
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        const parser = new SseParser();
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (error) {
            if (signal?.aborted) throw signal.reason ?? error;
            // The connection dropped: reconnect from the last cursor received.
            break;
          }
          const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
          for (const frame of parser.push(text)) {
            if (frame.retry !== undefined) retryMs = frame.retry;
            if (frame.comment) quiet = 0;
            if (frame.id !== undefined) resumeFrom = frame.id;
            if (frame.data === undefined) continue;
            quiet = 0;
            yield { cursor: cursorOf(frame, request), event: eventOf(frame, request) };
          }
          // The server ended the stream (a frame it did not finish is dropped): reconnect.
          if (chunk.done) break;
        }
      } finally {
        // Closes the connection whether the loop stopped, the consumer left or an error is thrown.
        link.abort();
      }
    }
  }
}

/** An AbortController that also aborts with `signal`, and stops listening to it once aborted. */
function linkedController(signal: AbortSignal | undefined): { signal: AbortSignal; abort(): void } {
  const controller = new AbortController();
  const follow = () => controller.abort(signal?.reason);
  if (signal?.aborted) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    abort() {
      signal?.removeEventListener('abort', follow);
      controller.abort();
    },
  };
}

/** What a reconnection waits out rather than throws: no connection, or a gateway or restart's answer. */
function isPassing(error: unknown): boolean {
  if (error instanceof RecordbaseNetworkError) return true;
  return (
    (error instanceof RecordbaseApiError || error instanceof RecordbaseResponseError) &&
    [502, 503, 504].includes(error.status)
  );
}

function cursorOf(frame: SseFrame, request: string): string {
  if (frame.lastEventId) return frame.lastEventId;
  throw new RecordbaseResponseError(`${request} sent an event without an id`, 200, request);
}

function eventOf(frame: SseFrame, request: string): ChangeEvent {
  let body: unknown;
  try {
    body = JSON.parse(frame.data ?? '');
  } catch {
    throw new RecordbaseResponseError(
      `${request} sent an event whose data is not JSON: ${(frame.data ?? '').slice(0, 200)}`,
      200,
      request,
    );
  }
  const parsed = changeEventSchema.safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(event)'}: ${issue.message}`)
      .join('; ');
    throw new RecordbaseResponseError(
      `${request} sent an event the contract does not allow: ${issues}`,
      200,
      request,
    );
  }
  if (frame.event !== 'message' && frame.event !== parsed.data.type) {
    throw new RecordbaseResponseError(
      `${request} sent a ${parsed.data.type} event framed as "${frame.event}"`,
      200,
      request,
    );
  }
  return parsed.data;
}

/**
 * What the parser hands on: a dispatched event (`data` set, with its `event` type and the last
 * event id so far), or what a line outside an event said (`id`, `retry`, a comment).
 */
export interface SseFrame {
  /** The event's data lines joined by `\n`; undefined for what is not an event. */
  data?: string;
  /** The `event:` field, `message` when absent (as EventSource names it). */
  event: string;
  /** The last `id:` received, on this frame or an earlier one. */
  lastEventId: string | undefined;
  /** An `id:` field on this frame. */
  id?: string;
  /** A `retry:` field on this frame, in milliseconds. */
  retry?: number;
  /** The frame held a comment line (`: keep-alive`). */
  comment?: boolean;
}

/**
 * Server-Sent Events as the HTML standard reads them ("Interpreting an event stream"), fed text as
 * it arrives: lines end with `\r\n`, `\n` or `\r` (a line ends at its `\r` at once, without
 * waiting to see whether a `\n` follows) and may be split anywhere between pushes; a
 * blank line ends a frame; `data:` lines add up; a line starting with `:` is a comment; a frame
 * left unfinished when the stream ends is never dispatched.
 */
export class SseParser {
  #buffer = '';
  #afterCr = false;
  #data: string[] = [];
  #event = '';
  #lastEventId: string | undefined;
  #id: string | undefined;
  #retry: number | undefined;
  #comment = false;

  /** The frames `text` completes, in order. */
  push(text: string): SseFrame[] {
    // A `\r` ended the last chunk: a `\n` starting this one belongs to it.
    this.#buffer += this.#afterCr && text.startsWith('\n') ? text.slice(1) : text;
    if (text !== '') this.#afterCr = false;
    const frames: SseFrame[] = [];
    let start = 0;
    for (;;) {
      const cr = this.#buffer.indexOf('\r', start);
      const lf = this.#buffer.indexOf('\n', start);
      if (cr < 0 && lf < 0) break;
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      const line = this.#buffer.slice(start, end);
      start = end + 1;
      if (end === cr) {
        if (start === this.#buffer.length) this.#afterCr = true;
        else if (this.#buffer[start] === '\n') start += 1;
      }
      const frame = this.#line(line);
      if (frame) frames.push(frame);
    }
    this.#buffer = this.#buffer.slice(start);
    return frames;
  }

  #line(line: string): SseFrame | undefined {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) {
      this.#comment = true;
      return undefined;
    }
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.#data.push(value);
    else if (name === 'event') this.#event = value;
    else if (name === 'id' && !value.includes('\0')) {
      this.#id = value;
      this.#lastEventId = value;
    } else if (name === 'retry' && /^\d+$/.test(value)) this.#retry = Number(value);
    return undefined;
  }

  #dispatch(): SseFrame | undefined {
    const frame: SseFrame = { event: this.#event || 'message', lastEventId: this.#lastEventId };
    if (this.#data.length > 0) frame.data = this.#data.join('\n');
    if (this.#id !== undefined) frame.id = this.#id;
    if (this.#retry !== undefined) frame.retry = this.#retry;
    if (this.#comment) frame.comment = true;
    const empty = frame.data === undefined && frame.id === undefined && frame.retry === undefined;
    this.#data = [];
    this.#event = '';
    this.#id = undefined;
    this.#retry = undefined;
    this.#comment = false;
    return empty && !frame.comment ? undefined : frame;
  }
}
