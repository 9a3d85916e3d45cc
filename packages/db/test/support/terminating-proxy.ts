import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy to PostgreSQL that hands its first connection to the client already dead: the
 * server's messages up to its first ReadyForQuery are held back, the backend is terminated, and
 * the client then reads the ReadyForQuery and the FATAL of the termination in one chunk. pg parses
 * both in the same turn, so the client is handed out by its pool and loses its connection before
 * the caller of `pool.connect()` has resumed, the narrowest moment a pg_terminate_backend can
 * strike. Later connections are carried as usual.
 */
export interface TerminatingProxy {
  /** A connection string to PostgreSQL through the proxy. */
  url(databaseUrl: string): string;
  /** Whether the first connection's backend was terminated (what it said then is on its way). */
  terminated(): boolean;
  close(): Promise<void>;
}

const READY_FOR_QUERY = 'Z'.charCodeAt(0);
const BACKEND_KEY_DATA = 'K'.charCodeAt(0);

export async function startTerminatingProxy(
  target: { host: string; port: number },
  /** Ends the backend of this process id (pg_terminate_backend on another connection). */
  terminate: (pid: number) => Promise<void>,
): Promise<TerminatingProxy> {
  const sockets = new Set<Socket>();
  let armed = true;
  let terminated = false;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => upstream.write(chunk));
    client.on('close', () => upstream.destroy());
    const holding = armed;
    armed = false;
    if (!holding) {
      upstream.on('data', (chunk) => client.write(chunk));
      upstream.on('close', () => client.destroy());
      return;
    }
    // The server's side of the startup, scanned message by message until its ReadyForQuery.
    let seen = Buffer.alloc(0);
    let parsed = 0;
    let pid: number | undefined;
    const held: Buffer[] = [];
    let ready = false;
    upstream.on('data', (chunk: Buffer) => {
      if (ready) {
        held.push(chunk);
        return;
      }
      seen = Buffer.concat([seen, chunk]);
      while (!ready && parsed + 5 <= seen.length) {
        const type = seen[parsed];
        const length = seen.readUInt32BE(parsed + 1);
        if (parsed + 1 + length > seen.length) break;
        if (type === BACKEND_KEY_DATA) pid = seen.readInt32BE(parsed + 5);
        if (type === READY_FOR_QUERY) ready = true;
        parsed += 1 + length;
      }
      if (!ready) {
        client.write(chunk);
        return;
      }
      held.push(chunk);
      if (pid === undefined) throw new Error('the server sent no BackendKeyData before ReadyForQuery');
      terminate(pid).then(
        () => {
          terminated = true;
        },
        () => upstream.destroy(),
      );
    });
    // What the terminated backend said last goes out with the ReadyForQuery, in one write.
    upstream.on('close', () => client.end(Buffer.concat(held)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    terminated: () => terminated,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
