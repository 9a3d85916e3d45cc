import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describeWithNginx } from './gateway-stack';
import { answers, type NpmStart, startNpmStart } from './npm-start';

/**
 * The gateway `npm start` runs listens where the services do (HOST, loopback by default), so a
 * laptop running the stack exposes nothing to its network unless told to.
 */

jest.setTimeout(180_000);

/** This machine's first address that is not loopback: where its network would reach it. */
function networkAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  if (!address) throw new Error('this machine has no IPv4 address other than loopback to try');
  return address;
}

/** 'open' when a TCP connection to host:port is accepted, else the error's code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describeWithNginx("npm start's gateway", () => {
  let stack: NpmStart | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  it('listens on loopback only by default', async () => {
    stack = await startNpmStart();
    const port = stack.ports.GATEWAY_PORT;
    await stack.until('the gateway answering', () => answers(`http://127.0.0.1:${port}/healthz`));
    expect(await tryConnect(networkAddress(), port)).toBe('ECONNREFUSED');
    // It said which database it uses, and what it migrated (a test database comes migrated).
    const { username, host, pathname } = new URL(stack.databaseUrl);
    expect(stack.process.output()).toContain(
      `[recordbase] database postgresql://${username}@${host}${pathname}: migrations up to date`,
    );
  });

  it('listens on the address HOST names', async () => {
    stack = await startNpmStart({ HOST: '0.0.0.0' });
    const port = stack.ports.GATEWAY_PORT;
    await stack.until('the gateway answering on the network', () =>
      answers(`http://${networkAddress()}:${port}/healthz`),
    );
  });
});
