import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** A local webhook receiver that records what it gets and answers as a test tells it to. */

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests assert on the delivered JSON themselves.
  json: any;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status of each next answer, in order; 200 once they run out. */
  respondWith(...statuses: number[]): void;
  /** Delay before answering, in ms. */
  delayBy(ms: number): void;
  /**
   * Waits for `count` deliveries (of one webhook, when `webhookId` is given) and returns them.
   * Delivery is at least once: with `distinct`, repeats of an event id count once.
   */
  waitFor(
    count: number,
    timeoutMs?: number,
    options?: { webhookId?: number; distinct?: boolean },
  ): Promise<Received[]>;
  /** What one webhook received, in order. */
  of(webhookId: number): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const statuses: number[] = [];
  let delay = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = () => {
        received.push({
          headers: req.headers,
          body,
          json: body ? JSON.parse(body) : undefined,
          at: Date.now(),
        });
        res.statusCode = statuses.shift() ?? 200;
        res.end('ok');
      };
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    respondWith: (...next) => statuses.push(...next),
    delayBy: (ms) => {
      delay = ms;
    },
    async waitFor(count, timeoutMs = 30_000, options = {}) {
      const deadline = Date.now() + timeoutMs;
      const matching = () => {
        const mine =
          options.webhookId === undefined
            ? received
            : received.filter((r) => r.json?.metadata?.webhookId === options.webhookId);
        if (!options.distinct) return mine;
        return mine.filter((r, i) => mine.findIndex((o) => o.json?.id === r.json?.id) === i);
      };
      while (matching().length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} deliveries, got ${matching().length}`);
        await new Promise((done) => setTimeout(done, 50));
      }
      return matching();
    },
    of: (webhookId) => received.filter((r) => r.json?.metadata?.webhookId === webhookId),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
