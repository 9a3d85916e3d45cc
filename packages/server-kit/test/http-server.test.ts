import { connect } from 'node:net';
import { commonEnvSchema, parseEnv } from '../src/env';
import { createHttpServer, listen } from '../src/lifecycle';

describe('createHttpServer', () => {
  it("refuses a headers deadline longer than the whole request's, naming both settings", () => {
    const config = parseEnv(commonEnvSchema, {
      HTTP_HEADERS_TIMEOUT_MS: '5000',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
    });
    expect(() => createHttpServer(() => {}, config)).toThrow(
      'HTTP_HEADERS_TIMEOUT_MS (5000) must not be more than HTTP_REQUEST_TIMEOUT_MS (1000)',
    );
  });

  it('refuses a deadline that is not a positive whole number of milliseconds', () => {
    expect(() => parseEnv(commonEnvSchema, { HTTP_REQUEST_TIMEOUT_MS: '0' })).toThrow(
      /HTTP_REQUEST_TIMEOUT_MS/,
    );
    expect(() => parseEnv(commonEnvSchema, { HTTP_HEADERS_TIMEOUT_MS: 'soon' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
  });

  it('answers 408 and closes a connection whose headers do not arrive within the deadline', async () => {
    const config = parseEnv(commonEnvSchema, {
      HTTP_HEADERS_TIMEOUT_MS: '300',
      HTTP_REQUEST_TIMEOUT_MS: '1000',
    });
    const server = createHttpServer((_req, res) => res.end('ok'), config);
    const port = await listen(server, 0, '127.0.0.1');
    try {
      const started = Date.now();
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n'));
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(text));
      });
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      // Cut near the deadline (checked every quarter of it), not at Node's 30 s check interval.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      server.close();
    }
  });
});
