import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { ChangesApi, type SseFrame, SseParser } from '../src/changes-api';
import { type ChangeEvent, isRecordbaseError, RecordbaseApiError, RecordbaseClient } from '../src/index';
import type { RetryPolicy } from '../src/retry';
import { Transport } from '../src/transport';

/**
 * The change feed's client against a local server answering from a script: the SSE parsing, with
 * frames and lines split anywhere, and the stream's resuming from the last id after a drop.
 */

/** One answer per request: JSON (an error before the stream), or a stream written chunk by chunk. */
type Step =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** Destroys the connection before answering. */
  | { refuse: true }
  | {
      stream: (string | Buffer)[];
      /** After the chunks: end the response, destroy the connection, or hold it open. */
      after: 'end' | 'reset' | 'hold';
      contentType?: string;
    };

interface SeenRequest {
  url: string;
  headers: IncomingHttpHeaders;
  /** Resolves when the client closed the connection, or the server ended it. */
  closed: Promise<void>;
}

let server: Server;
let origin: string;
let script: Step[];
let requests: SeenRequest[];

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function play(step: Step, res: ServerResponse): Promise<void> {
  if ('refuse' in step) {
    res.socket?.destroy();
    return;
  }
  if (!('stream' in step)) {
    res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
    res.end(JSON.stringify(step.body ?? null));
    return;
  }
  res.writeHead(200, { 'content-type': step.contentType ?? 'text/event-stream; charset=utf-8' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  for (const chunk of step.stream) {
    if (res.destroyed) return;
    res.write(chunk);
    // Apart in time, so that each chunk reaches the client as a read of its own.
    await pause(2);
  }
  if (step.after === 'end') res.end();
  else if (step.after === 'reset') res.socket?.destroy();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    requests.push({ url: req.url ?? '', headers: req.headers, closed });
    const step = script.shift() ?? { status: 500, body: 'the test gave no answer for this request' };
    void play(step, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
beforeEach(() => {
  script = [];
  requests = [];
  waits = [];
});

const baseId = randomUUID();
const tableId = 'tblAbCdEfGhIjKlMn';

/** A `record.created` event of one record, as the feed sends it. */
function recordCreated(name = 'Ada'): ChangeEvent {
  const recordId = randomUUID();
  const at = new Date().toISOString();
  return {
    id: `evt_${randomUUID()}`,
    type: 'record.created',
    timestamp: at,
    data: {
      tableId,
      recordIds: [recordId],
      records: [
        {
          id: recordId,
          data: { fldAbCdEfGhIjKlMn: name },
          fields: { Name: name },
          createdAt: at,
          updatedAt: at,
        },
      ],
    },
    metadata: { baseId, source: 'public_api' },
  };
}

/** The frame the server writes for an event. */
const frame = (cursor: string, event: ChangeEvent) =>
  `id: ${cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
const RETRY_FAST = 'retry: 5\n\n';

let waits: number[];
/** A ChangesApi whose reconnection waits are recorded rather than slept. */
function recordingApi(retry: Partial<RetryPolicy> = {}) {
  const transport = new Transport({
    apiKey: 'key_test',
    retry,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return new ChangesApi(transport, `${origin}/api/v1`, async (ms, signal) => {
    waits.push(ms);
    if (signal?.aborted) throw signal.reason;
  });
}
const client = (retry: Partial<RetryPolicy> = {}) =>
  new RecordbaseClient({ apiUrl: `${origin}/api/v1`, apiKey: 'key_test', retry });

/** The first `count` changes of a stream, then leaves the loop (which closes the connection). */
async function take<T>(stream: AsyncIterable<T>, count: number): Promise<T[]> {
  const taken: T[] = [];
  if (count === 0) return taken;
  for await (const item of stream) {
    taken.push(item);
    if (taken.length === count) break;
  }
  return taken;
}

describe('the SSE parser', () => {
  const text = [
    'retry: 1000',
    '',
    ': keep-alive',
    '',
    'id: 10-0',
    'event: record.created',
    'data: {"a":',
    'data:1}',
    '',
    ': a comment inside a frame',
    'event: table.created',
    'data',
    'data:  two spaces',
    'ignored: field',
    '',
    'id: 11-2',
    '',
    'data: last',
    '',
    '',
  ].join('\n');
  const expected: SseFrame[] = [
    { event: 'message', lastEventId: undefined, retry: 1000 },
    { event: 'message', lastEventId: undefined, comment: true },
    { event: 'record.created', lastEventId: '10-0', id: '10-0', data: '{"a":\n1}' },
    // An event without an id line keeps the last one; `data` alone is an empty line.
    { event: 'table.created', lastEventId: '10-0', data: '\n two spaces', comment: true },
    { event: 'message', lastEventId: '11-2', id: '11-2' },
    { event: 'message', lastEventId: '11-2', data: 'last' },
  ];
  const parse = (chunks: string[]) => {
    const parser = new SseParser();
    return chunks.flatMap((chunk) => parser.push(chunk));
  };

  it('reads frames, comments, multi-line data, ids and retry', () => {
    expect(parse([text])).toEqual(expected);
  });

  it('gives the same frames whatever the chunks and line endings', () => {
    for (const ending of ['\n', '\r\n', '\r']) {
      const written = text.replaceAll('\n', ending);
      expect(parse([...written])).toEqual(expected);
      for (let cut = 0; cut <= written.length; cut += 1)
        expect(parse([written.slice(0, cut), written.slice(cut)])).toEqual(expected);
    }
  });

  it('ends a line at its \\r at once, taking a \\n that starts the next chunk as part of it', () => {
    const parser = new SseParser();
    const frameOf = (data: string) => ({ event: 'message', lastEventId: undefined, data });
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\n\r')).toEqual([frameOf('a')]);
    expect(parser.push('')).toEqual([]);
    expect(parser.push('\ndata: b\r\r')).toEqual([frameOf('b')]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('data: c\n\n')).toEqual([frameOf('c')]);
  });

  it('dispatches no frame the stream did not finish', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1-0\nevent: record.created\ndata: {"half":')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
  });
});

describe('changes.list', () => {
  it('reads a page with the filters in the query and checks it against the contract', async () => {
    const event = recordCreated();
    script.push({ status: 200, body: { changes: [event], cursor: '12-3', hasMore: false } });
    const page = await client().changes.list(baseId, {
      cursor: '10-0',
      limit: 2,
      tableId: 'Q3/Q4 deals',
      types: ['record.created', 'record.updated'],
    });
    expect(page).toEqual({ changes: [event], cursor: '12-3', hasMore: false });
    expect(requests[0]!.url).toBe(
      `/api/v1/bases/${baseId}/changes?cursor=10-0&limit=2&tableId=Q3%2FQ4+deals&types=record.created%2Crecord.updated`,
    );
    expect(requests[0]!.headers.authorization).toBe('Bearer key_test');

    script.push({ status: 200, body: { changes: [{ ...event, type: 'record.exploded' }], cursor: '1-0' } });
    await expect(client().changes.list(baseId)).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
  });

  it('throws a 410 as CURSOR_EXPIRED', async () => {
    script.push({ status: 410, body: { error: { code: 'CURSOR_EXPIRED', message: 'events were deleted' } } });
    const error = await client()
      .changes.list(baseId, { cursor: '1-0' })
      .catch((e: unknown) => e);
    expect(isRecordbaseError(error, 'CURSOR_EXPIRED')).toBe(true);
    expect(error).toMatchObject({ status: 410 });
  });
});

describe('changes.stream', () => {
  it('sends the key and the filters, validates each event, and resumes from the last id when the stream ends', async () => {
    const events = [recordCreated('a'), recordCreated('b'), recordCreated('c')];
    script.push(
      { stream: [RETRY_FAST, frame('20-0', events[0]!), frame('21-0', events[1]!)], after: 'end' },
      { stream: [RETRY_FAST, ': keep-alive\n\n', frame('22-1', events[2]!)], after: 'hold' },
    );
    const received = await take(
      client().changes.stream(baseId, {
        cursor: '5-0',
        tableId: 'Tasks',
        types: ['record.created', 'record.updated'],
      }),
      3,
    );
    expect(received).toEqual([
      { cursor: '20-0', event: events[0] },
      { cursor: '21-0', event: events[1] },
      { cursor: '22-1', event: events[2] },
    ]);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.url).toBe(
        `/api/v1/bases/${baseId}/changes/stream?cursor=5-0&tableId=Tasks&types=record.created%2Crecord.updated`,
      );
      expect(request.headers).toMatchObject({
        authorization: 'Bearer key_test',
        accept: 'text/event-stream',
      });
    }
    expect(requests[0]!.headers['last-event-id']).toBeUndefined();
    expect(requests[1]!.headers['last-event-id']).toBe('21-0');
    // Leaving the loop closed the connection the server held open.
    await requests[1]!.closed;
  });

  it('reads frames split anywhere, byte by byte, with \\r\\n line ends and characters of several bytes', async () => {
    const events = [recordCreated('Zoë 🚀'), recordCreated('naïve\u2028text')];
    const text =
      `retry: 5\r\n\r\n: keep-alive\r\n\r\n${frame('30-0', events[0]!)}${frame('31-0', events[1]!)}`.replaceAll(
        /\r?\n/g,
        '\r\n',
      );
    const bytes = Buffer.from(text);
    const chunks = [...bytes].map((byte) => Buffer.from([byte]));
    script.push({ stream: chunks, after: 'hold' });
    const received = await take(client().changes.stream(baseId), 2);
    expect(received).toEqual([
      { cursor: '30-0', event: events[0] },
      { cursor: '31-0', event: events[1] },
    ]);
  });

  it('throws a 410 answered before the stream as CURSOR_EXPIRED, without retrying', async () => {
    script.push({
      status: 410,
      body: { error: { code: 'CURSOR_EXPIRED', message: 'events after this cursor were deleted' } },
    });
    const error = await take(client().changes.stream(baseId, { cursor: '1-0' }), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordbaseApiError);
    expect(error).toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
    expect(requests).toHaveLength(1);
  });

  it('resumes after the connection is reset mid-frame, never handing out the half frame', async () => {
    const events = [recordCreated('a'), recordCreated('b')];
    const second = frame('41-0', events[1]!);
    script.push(
      { stream: [RETRY_FAST, frame('40-0', events[0]!), second.slice(0, 60)], after: 'reset' },
      { stream: [RETRY_FAST, second], after: 'hold' },
    );
    const received = await take(client().changes.stream(baseId, { cursor: '39-9' }), 2);
    expect(received.map((change) => change.cursor)).toEqual(['40-0', '41-0']);
    expect(received[1]!.event).toEqual(events[1]);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([undefined, '40-0']);
  });

  it('resumes from the cursor given when no event came yet, and from the start without one', async () => {
    const event = recordCreated();
    script.push({ stream: [RETRY_FAST], after: 'end' }, { stream: [frame('50-0', event)], after: 'hold' });
    await take(client().changes.stream(baseId, { cursor: '49-0' }), 1);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([undefined, '49-0']);

    requests = [];
    script.push({ stream: [RETRY_FAST], after: 'end' }, { stream: [frame('50-0', event)], after: 'hold' });
    await take(client().changes.stream(baseId), 1);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([undefined, undefined]);
    expect(requests.map((request) => request.url)).toEqual([
      `/api/v1/bases/${baseId}/changes/stream`,
      `/api/v1/bases/${baseId}/changes/stream`,
    ]);
  });

  it("waits the server's retry before reconnecting, doubled while reconnections hear nothing, up to the cap", async () => {
    const events = [recordCreated('a'), recordCreated('b')];
    script.push(
      { stream: ['retry: 200\n\n'], after: 'end' },
      { stream: [], after: 'end' },
      { stream: [], after: 'reset' },
      { stream: [frame('60-0', events[0]!)], after: 'end' },
      { stream: [], after: 'end' },
      { stream: [frame('61-0', events[1]!)], after: 'hold' },
    );
    const received = await take(recordingApi({ maxDelayMs: 700 }).stream(baseId), 2);
    expect(received.map((change) => change.cursor)).toEqual(['60-0', '61-0']);
    expect(waits).toHaveLength(5);
    const [first, second, third, afterEvent, again] = waits as [number, number, number, number, number];
    expect(first).toBeGreaterThanOrEqual(200);
    expect(first).toBeLessThanOrEqual(240);
    expect(second).toBeGreaterThanOrEqual(400);
    expect(second).toBeLessThanOrEqual(480);
    // 800 and more, capped by the policy's maxDelayMs.
    expect(third).toBe(700);
    // An event heard starts the doubling again.
    expect(afterEvent).toBeGreaterThanOrEqual(200);
    expect(afterEvent).toBeLessThanOrEqual(240);
    expect(again).toBeGreaterThanOrEqual(400);
    expect(again).toBeLessThanOrEqual(480);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      '60-0',
      '60-0',
    ]);
  });

  it('waits 1000 ms by default, the server having named no retry', async () => {
    const event = recordCreated();
    script.push({ stream: [], after: 'end' }, { stream: [frame('70-0', event)], after: 'hold' });
    await take(recordingApi().stream(baseId), 1);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
    expect(waits[0]).toBeLessThanOrEqual(1200);
  });

  it('keeps reconnecting through failed connections and a 503, then throws a 410 answered on reconnecting', async () => {
    const events = [recordCreated('a'), recordCreated('b')];
    const unavailable = {
      status: 503,
      body: { error: { code: 'SERVICE_UNAVAILABLE', message: 'restarting' } },
    };
    script.push(
      { stream: [RETRY_FAST, frame('80-0', events[0]!)], after: 'reset' },
      { refuse: true },
      unavailable,
      { stream: [RETRY_FAST, frame('81-0', events[1]!)], after: 'end' },
      { status: 410, body: { error: { code: 'CURSOR_EXPIRED', message: 'deleted by retention' } } },
    );
    const received: string[] = [];
    const error = await (async () => {
      for await (const change of recordingApi({ maxAttempts: 1 }).stream(baseId))
        received.push(change.cursor);
    })().catch((e: unknown) => e);
    expect(received).toEqual(['80-0', '81-0']);
    expect(error).toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([
      undefined,
      '80-0',
      '80-0',
      '80-0',
      '81-0',
    ]);
  });

  it('retries a 429 before the stream as every request is', async () => {
    const event = recordCreated();
    script.push(
      {
        status: 429,
        headers: { 'retry-after': '0' },
        body: { error: { code: 'RATE_LIMITED', message: 'too many change streams' } },
      },
      { stream: [frame('90-0', event)], after: 'hold' },
    );
    await expect(take(client().changes.stream(baseId), 1)).resolves.toEqual([{ cursor: '90-0', event }]);
    expect(requests).toHaveLength(2);

    requests = [];
    script.push({
      status: 429,
      body: { error: { code: 'RATE_LIMITED', message: 'too many change streams' } },
    });
    const error = await take(client({ maxAttempts: 1 }).changes.stream(baseId), 1).catch((e: unknown) => e);
    expect(isRecordbaseError(error, 'RATE_LIMITED')).toBe(true);
  });

  it('closes the connection and throws the reason when the signal aborts', async () => {
    const controller = new AbortController();
    script.push({ stream: [RETRY_FAST, frame('100-0', recordCreated())], after: 'hold' });
    const received: string[] = [];
    const done = (async () => {
      for await (const change of client().changes.stream(baseId, { signal: controller.signal })) {
        received.push(change.cursor);
        controller.abort(new Error('the caller gave up'));
      }
    })();
    await expect(done).rejects.toThrow('the caller gave up');
    expect(received).toEqual(['100-0']);
    await requests[0]!.closed;
    expect(requests).toHaveLength(1);

    // Aborted while waiting for the next event, the same.
    const waiting = new AbortController();
    requests = [];
    script.push({ stream: [RETRY_FAST], after: 'hold' });
    const pending = take(client().changes.stream(baseId, { signal: waiting.signal }), 1);
    while (requests.length === 0) await pause(5);
    waiting.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    await requests[0]!.closed;
  });

  it('resolves cursor=latest to the cursor it stands for, so that a reconnection skips nothing', async () => {
    const event = recordCreated();
    script.push(
      { status: 200, body: { changes: [], cursor: '120-4', hasMore: false } },
      { stream: [RETRY_FAST], after: 'end' },
      { stream: [frame('121-0', event)], after: 'hold' },
    );
    await take(client().changes.stream(baseId, { cursor: 'latest', types: ['record.created'] }), 1);
    expect(requests.map((request) => [request.url, request.headers['last-event-id']])).toEqual([
      [`/api/v1/bases/${baseId}/changes?cursor=latest`, undefined],
      [`/api/v1/bases/${baseId}/changes/stream?cursor=120-4&types=record.created`, undefined],
      [`/api/v1/bases/${baseId}/changes/stream?cursor=120-4&types=record.created`, '120-4'],
    ]);
  });

  it('refuses an answer that is no event stream, and an event the contract does not allow', async () => {
    script.push({ stream: ['{"changes":[]}'], after: 'end', contentType: 'application/json' });
    const notStream = await take(client().changes.stream(baseId), 1).catch((e: unknown) => e);
    expect(notStream).toMatchObject({ code: 'INVALID_RESPONSE', status: 200 });
    expect((notStream as Error).message).toMatch(/not an event stream/);

    const event = { ...recordCreated(), metadata: { baseId: 'nope', source: 'public_api' } };
    script.push({
      stream: [`id: 1-0\nevent: record.created\ndata: ${JSON.stringify(event)}\n\n`],
      after: 'hold',
    });
    const invalid = await take(client().changes.stream(baseId), 1).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: 'INVALID_RESPONSE' });
    expect((invalid as Error).message).toMatch(/metadata\.baseId/);

    script.push({ stream: ['id: 1-0\nevent: record.created\ndata: {not json\n\n'], after: 'hold' });
    const notJson = await take(client().changes.stream(baseId), 1).catch((e: unknown) => e);
    expect((notJson as Error).message).toMatch(/not JSON/);
  });
});
