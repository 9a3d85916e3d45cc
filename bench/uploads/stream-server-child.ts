import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ChildMessage } from './children';

/**
 * Entry of the raw stream server: the least an HTTP upload can cost. Every POST body is piped into
 * a new file of the directory given as the first argument, fsynced before close (`flush`, as the
 * local-disk driver does), and answered 201 with the bytes written. No parsing, hashing,
 * sniffing, authentication or database.
 */

const directory = process.argv[2];
if (!directory) throw new Error('usage: stream-server-child.ts <directory>');

const server = createServer((req, res) => {
  const out = createWriteStream(join(directory, `${randomBytes(8).toString('hex')}.bin`), {
    flags: 'wx',
    flush: true,
  });
  pipeline(req, out).then(
    () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ size: out.bytesWritten }));
    },
    (error: Error) => {
      res.writeHead(500);
      res.end(error.message);
    },
  );
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({
    type: 'ready',
    port: typeof address === 'object' && address ? address.port : 0,
  } satisfies ChildMessage);
});
process.on('disconnect', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
