import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/**
 * A local HTTP server answering from a script, one answer per request, to drive the client
 * through what the real services answer rarely on demand (a 503, a broken body, a reset).
 */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  /** Sent as is; objects as JSON. */
  body?: unknown;
  /** Destroys the connection instead of answering. */
  reset?: boolean;
}

export interface ScriptedServer {
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  answer(...answers: ScriptedAnswer[]): void;
  /** Forgets the requests seen and the answers not given. */
  reset(): void;
  close(): Promise<void>;
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const script: ScriptedAnswer[] = [];
  const requests: ScriptedServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const next = script.shift() ?? { status: 500, body: 'the test gave no answer for this request' };
      if (next.reset) {
        req.socket.destroy();
        return;
      }
      const text = typeof next.body === 'string' ? next.body : JSON.stringify(next.body ?? null);
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (...answers) => script.push(...answers),
    reset: () => {
      requests.length = 0;
      script.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
