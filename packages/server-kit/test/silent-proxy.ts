import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy to PostgreSQL that can go silent on the connections it carries: it then forwards
 * nothing either way and tells neither side when the other closes. To the client such a
 * connection looks up for ever, as one does behind a network partition or to a host that
 * vanished. Connections opened after a cut are carried as usual.
 */
export interface SilentProxy {
  /** A connection string to PostgreSQL through the proxy. */
  url(databaseUrl: string): string;
  /** Silences every connection open now. */
  cut(): void;
  close(): Promise<void>;
}

export async function startSilentProxy(target: { host: string; port: number }): Promise<SilentProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; silent: boolean }>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream, silent: false };
    pairs.add(pair);
    const carry = (from: Socket, to: Socket) => {
      from.on('data', (chunk) => {
        if (!pair.silent) to.write(chunk);
      });
      from.on('close', () => {
        if (!pair.silent) to.destroy();
      });
      from.on('error', () => {});
    };
    carry(client, upstream);
    carry(upstream, client);
    client.on('close', () => pairs.delete(pair));
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
    cut() {
      for (const pair of pairs) pair.silent = true;
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
