import { connect } from 'node:net';
import { describeWithNginx, type GatewayStack, startGatewayStack } from './gateway-stack';
import { type ServiceName, type Stack, serviceNames, startStack } from './stack';

/**
 * Slowloris-style clients: request headers, or a body, sent one byte a second. Each must be cut
 * off by a timeout, not hold a connection for as long as the client likes.
 * - At the gateway (quick, in `npm test` where nginx is installed): headers are cut by nginx's
 *   client_header_timeout (30 s).
 * - In each service (heavy: RUN_SLOW_CLIENT_TESTS=1, about six minutes): headers by Node's
 *   server.headersTimeout (60 s, checked every 30 s), bodies by server.requestTimeout (300 s),
 *   the defaults the services keep.
 */

const HEAVY = process.env.RUN_SLOW_CLIENT_TESTS === '1';

interface Trickle {
  /** True when the server closed the connection before the client ran out of time. */
  cut: boolean;
  seconds: number;
  /** What the server answered before closing, if anything. */
  answer: string;
}

/**
 * Sends `head` at once, then `trickle` one byte a second until the server closes the connection
 * or `maxSeconds` pass.
 */
function trickle(port: number, head: string, trickle: string, maxSeconds: number): Promise<Trickle> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      timer = setInterval(() => {
        const seconds = (Date.now() - started) / 1000;
        if (seconds > maxSeconds) {
          finish(false);
          return;
        }
        socket.write(trickle[sent % trickle.length]!);
        sent += 1;
      }, 1000);
    });
    const finish = (cut: boolean) => {
      clearInterval(timer);
      socket.destroy();
      resolve({ cut, seconds: Math.round((Date.now() - started) / 1000), answer });
    };
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
  });
}

const slowHeaders = (port: number, maxSeconds: number) =>
  trickle(
    port,
    'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
    'abcdefghijklmnopqrstuvwxyz',
    maxSeconds,
  );

const slowBody = (port: number, path: string, headers: Record<string, string>, maxSeconds: number) =>
  trickle(
    port,
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`,
    'x',
    maxSeconds,
  );

describeWithNginx('slow clients at the gateway', () => {
  let gateway: GatewayStack;

  beforeAll(async () => {
    gateway = await startGatewayStack();
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('cuts off request headers sent one byte a second (client_header_timeout)', async () => {
    const port = Number(new URL(gateway.url).port);
    const result = await slowHeaders(port, 90);
    expect(result.cut).toBe(true);
    // Nothing was proxied: no service answered a request that never ended its headers.
    expect(result.answer).not.toMatch(/^HTTP\/1\.1 2/);
  });
});

const describeHeavy = HEAVY ? describe : describe.skip;
if (!HEAVY) {
  console.warn(
    'SKIPPED: slow clients against each service (heavy: about six minutes); set RUN_SLOW_CLIENT_TESTS=1.',
  );
}

describeHeavy('slow clients at each service', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('every service cuts off request headers sent one byte a second (headersTimeout)', async () => {
    const results = await Promise.all(
      serviceNames.map(
        async (name: ServiceName) => [name, await slowHeaders(stack.ports[name], 150)] as const,
      ),
    );
    for (const [name, result] of results) expect({ name, cut: result.cut }).toEqual({ name, cut: true });
  }, 200_000);

  it('records-api and upload-service cut off a body sent one byte a second (requestTimeout)', async () => {
    const authorization = `Bearer ${stack.rootKey}`;
    const results = await Promise.all([
      slowBody(
        stack.ports['records-api'],
        '/api/v1/bases',
        { authorization, 'content-type': 'application/json' },
        420,
      ),
      slowBody(
        stack.ports['upload-service'],
        '/csvupload',
        { authorization, 'content-type': 'multipart/form-data; boundary=slow' },
        420,
      ),
    ]);
    expect(results.map((result) => result.cut)).toEqual([true, true]);
  }, 450_000);
});
