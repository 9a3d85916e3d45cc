import { connect } from 'node:net';
import { describeWithNginx, type GatewayStack, startGatewayStack } from './gateway-stack';
import { type ServiceName, type Stack, serviceNames, startStack } from './stack';

/**
 * Slowloris-style clients: request headers, or a body, sent one byte a second. Each must be cut
 * off by a timeout, not hold a connection for as long as the client likes.
 * - At the gateway (where nginx is installed): headers are cut by nginx's client_header_timeout
 *   (30 s).
 * - In each service: headers by HTTP_HEADERS_TIMEOUT_MS, a body by HTTP_REQUEST_TIMEOUT_MS (60 s
 *   and 300 s by default; a few seconds here, so the test is quick), while a client that is slow
 *   but within them is answered.
 */

const HEADERS_TIMEOUT_S = 3;
const REQUEST_TIMEOUT_S = 8;
const SHORT_DEADLINES = {
  HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_S * 1000),
  HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_S * 1000),
};

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
    gateway = await startGatewayStack({ env: SHORT_DEADLINES });
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
  }, 120_000);

  it("cuts off a JSON body sent one byte a second, by the service's whole-request deadline", async () => {
    const port = Number(new URL(gateway.url).port);
    const result = await slowBody(
      port,
      '/api/v1/bases',
      { authorization: `Bearer ${gateway.stack.rootKey}`, 'content-type': 'application/json' },
      60,
    );
    // Not held for as long as bytes keep coming (nginx alone only bounds the gap between two).
    expect(result.cut).toBe(true);
    expect(result.seconds).toBeLessThanOrEqual(REQUEST_TIMEOUT_S + 5);
    expect((await gateway.stack.api('GET', '/bases')).body.bases).toEqual([]);
  }, 90_000);
});

describe('slow clients at each service', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: SHORT_DEADLINES });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('every service cuts off request headers sent one byte a second (HTTP_HEADERS_TIMEOUT_MS)', async () => {
    const results = await Promise.all(
      serviceNames.map(
        async (name: ServiceName) => [name, await slowHeaders(stack.ports[name], 30)] as const,
      ),
    );
    for (const [name, result] of results) {
      expect({ name, cut: result.cut, answer: result.answer.split('\r\n')[0] }).toEqual({
        name,
        cut: true,
        answer: 'HTTP/1.1 408 Request Timeout',
      });
      // Cut by this deadline: not at once, and not by some later one.
      expect(result.seconds).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_S - 1);
      expect(result.seconds).toBeLessThanOrEqual(HEADERS_TIMEOUT_S + 3);
    }
  }, 60_000);

  it('records-api and upload-service cut off a body sent one byte a second (HTTP_REQUEST_TIMEOUT_MS)', async () => {
    const authorization = `Bearer ${stack.rootKey}`;
    const results = await Promise.all([
      slowBody(
        stack.ports['records-api'],
        '/api/v1/bases',
        { authorization, 'content-type': 'application/json' },
        60,
      ),
      slowBody(
        stack.ports['upload-service'],
        '/csvupload',
        { authorization, 'content-type': 'multipart/form-data; boundary=slow' },
        60,
      ),
    ]);
    for (const result of results) {
      expect(result.cut).toBe(true);
      expect(result.seconds).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_S - 1);
      expect(result.seconds).toBeLessThanOrEqual(REQUEST_TIMEOUT_S + 3);
    }
    // Nothing half-written: the trickled base was never created.
    const bases = await stack.api('GET', '/bases');
    expect(bases.body.bases).toEqual([]);
  }, 90_000);

  it('answers a client that is slow but within both deadlines', async () => {
    const body = JSON.stringify({ name: 'Slow but in time' });
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(stack.ports['records-api'], '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/bases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${stack.rootKey}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        );
        // The body in three parts, a second apart: slower than most, well within 8 s.
        const parts = [body.slice(0, 5), body.slice(5, 15), body.slice(15)];
        for (const [index, part] of parts.entries()) {
          setTimeout(() => socket.write(part), (index + 1) * 1000);
        }
      });
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    expect(answer).toContain('"name":"Slow but in time"');
  }, 30_000);
});
