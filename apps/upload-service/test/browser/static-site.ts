import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A customer's web site in miniature: its own origin (another port), serving its pages and the
 * filepond package's own dist files, as a site that bundles or hosts FilePond would.
 */

export interface StaticSite {
  /** `http://127.0.0.1:PORT`, the Origin its pages send. */
  origin: string;
  /** Serves `html` at `path` from now on. */
  page(path: string, html: string): void;
  close(): Promise<void>;
}

const assets: Record<string, { file: string; type: string }> = {
  '/filepond.min.js': { file: 'filepond/dist/filepond.min.js', type: 'text/javascript; charset=utf-8' },
  '/filepond.min.css': { file: 'filepond/dist/filepond.min.css', type: 'text/css; charset=utf-8' },
};

export async function startStaticSite(): Promise<StaticSite> {
  const pages = new Map<string, string>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const asset = assets[path];
    const page = pages.get(path);
    if (req.method !== 'GET' || (!asset && page === undefined)) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const [type, body] = asset
      ? [asset.type, readFileSync(require.resolve(asset.file))]
      : ['text/html; charset=utf-8', page!];
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-store' }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    page: (path, html) => pages.set(path, html),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
