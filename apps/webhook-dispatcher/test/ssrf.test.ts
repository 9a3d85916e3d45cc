import {
  checkAddress,
  parseCidr,
  parseCidrList,
  RefusedAddressError,
  resolveAndVet,
} from '@recordbase/server-kit/ssrf';
import { sendWebhook } from '../src/send';
import { type Receiver, startReceiver } from './helpers';

describe('the address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['fd00::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'reserved'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(checkAddress(address)).toEqual({ allowed: false, reason });
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(checkAddress(address)).toEqual({ allowed: true });
  });

  it('honours the allow-list, for mapped forms too, and only within its ranges', () => {
    const allowList = parseCidrList('127.0.0.1/32, 10.1.0.0/16, fd12::/16');
    expect(checkAddress('127.0.0.1', allowList)).toEqual({ allowed: true });
    expect(checkAddress('::ffff:127.0.0.1', allowList)).toEqual({ allowed: true });
    expect(checkAddress('127.0.0.2', allowList)).toEqual({ allowed: false, reason: 'loopback' });
    expect(checkAddress('10.1.200.3', allowList)).toEqual({ allowed: true });
    expect(checkAddress('10.2.0.1', allowList)).toEqual({ allowed: false, reason: 'private' });
    expect(checkAddress('fd12::5', allowList)).toEqual({ allowed: true });
    expect(checkAddress('::1', allowList)).toEqual({ allowed: false, reason: 'loopback' });
  });

  it('refuses what is not an address', () => {
    expect(checkAddress('example.com')).toEqual({ allowed: false, reason: 'not an IP address' });
  });

  it('parses CIDR ranges and bare addresses, naming a bad one', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ family: 4, bits: 8 });
    expect(parseCidr('10.1.2.3/8')).toMatchObject({ base: 10n << 24n });
    expect(parseCidr('::1')).toMatchObject({ family: 6, bits: 128 });
    expect(parseCidrList('')).toEqual([]);
    expect(() => parseCidr('10.0.0.0/33')).toThrow(/prefix length/);
    expect(() => parseCidr('example.com/8')).toThrow(/not an IP address/);
  });
});

describe('resolving before connecting', () => {
  it('refuses a hostname resolving to a private address (localhost)', async () => {
    await expect(resolveAndVet('localhost', [])).rejects.toThrow(RefusedAddressError);
    await expect(resolveAndVet('localhost', [])).rejects.toThrow(/localhost resolves to a loopback address/);
  });

  it('refuses a hostname when any of its addresses is refused', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: '10.0.0.7', family: 4 as const },
    ];
    await expect(resolveAndVet('mixed.example', [], resolve)).rejects.toThrow(/private/);
  });

  it('answers the checked addresses of a public name and of an IP literal', async () => {
    const resolve = async () => [{ address: '93.184.215.14', family: 4 as const }];
    await expect(resolveAndVet('public.example', [], resolve)).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
    ]);
    await expect(resolveAndVet('[::1]', parseCidrList('::1/128'))).resolves.toEqual([
      { address: '::1', family: 6 },
    ]);
  });

  it('never names the refused address in its message', async () => {
    const error = await resolveAndVet('169.254.169.254', []).catch((caught: Error) => caught);
    expect((error as Error).message).toBe('refused to connect to a link-local address');
  });
});

describe('sending one attempt', () => {
  let receiver: Receiver;
  let other: Receiver;
  const allowLoopback = parseCidrList('127.0.0.1/32');

  beforeAll(async () => {
    receiver = await startReceiver();
    // A second server on another loopback address, outside the allow-list.
    other = await startReceiver('127.0.0.2');
  });
  afterAll(async () => {
    await receiver.close();
    await other.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    other.requests.length = 0;
    receiver.respond((_request, response) => response.end('ok'));
  });

  it('posts JSON with the given headers and succeeds on 2xx', async () => {
    const result = await sendWebhook(receiver.url, { 'webhook-id': 'evt_1' }, '{"a":1}', {
      timeoutMs: 2000,
      allowedCidrs: allowLoopback,
    });
    expect(result).toMatchObject({ ok: true, statusCode: 200, errorKind: null, responseExcerpt: 'ok' });
    expect(receiver.requests[0]).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(receiver.requests[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
    });
  });

  it.each([
    'http://127.0.0.1/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.1.2.3/',
    'https://[::ffff:127.0.0.1]/',
  ])('refuses %s without the allow-list, before any connection', async (url) => {
    const result = await sendWebhook(url, {}, '{}', { timeoutMs: 2000, allowedCidrs: [] });
    expect(result).toMatchObject({ ok: false, statusCode: null, errorKind: 'ssrf' });
  });

  it('refuses localhost when loopback is not allowed, without connecting', async () => {
    const url = `http://localhost:${receiver.port}/hook`;
    const result = await sendWebhook(url, {}, '{}', { timeoutMs: 2000, allowedCidrs: [] });
    expect(result).toMatchObject({ ok: false, statusCode: null, errorKind: 'ssrf' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses an address outside the allow-list', async () => {
    const result = await sendWebhook(other.url, {}, '{}', { timeoutMs: 2000, allowedCidrs: allowLoopback });
    expect(result).toMatchObject({
      ok: false,
      errorKind: 'ssrf',
      error: 'refused to connect to a loopback address',
    });
    expect(other.requests).toHaveLength(0);
  });

  it('connects only to the checked address, whatever a second DNS answer would say', async () => {
    // The resolver answers once; a rebinding resolver would answer differently the second time.
    let calls = 0;
    const resolve = async () => {
      calls++;
      return [{ address: calls === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 as const }];
    };
    const url = `http://rebinding.test:${receiver.port}/hook`;
    const result = await sendWebhook(url, {}, '{}', {
      timeoutMs: 2000,
      allowedCidrs: allowLoopback,
      resolve,
    });
    expect(result).toMatchObject({ ok: true, statusCode: 200 });
    expect(calls).toBe(1);
    expect(receiver.requests[0]!.headers.host).toBe(`rebinding.test:${receiver.port}`);
  });

  it('does not follow a redirect to a private address and counts it as a failure', async () => {
    receiver.respond((_request, response) => {
      response.writeHead(302, { location: other.url }).end();
    });
    const result = await sendWebhook(receiver.url, {}, '{}', {
      timeoutMs: 2000,
      allowedCidrs: allowLoopback,
    });
    expect(result).toMatchObject({ ok: false, statusCode: 302, errorKind: 'http' });
    expect(result.error).toMatch(/redirects are not followed/);
    expect(receiver.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(0);
  });

  it('gives up at the deadline', async () => {
    receiver.respond(() => {
      // Never answers.
    });
    const result = await sendWebhook(receiver.url, {}, '{}', { timeoutMs: 300, allowedCidrs: allowLoopback });
    expect(result).toMatchObject({ ok: false, statusCode: null, errorKind: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('reports a refused connection as a network error', async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const result = await sendWebhook(url, {}, '{}', { timeoutMs: 2000, allowedCidrs: allowLoopback });
    expect(result).toMatchObject({ ok: false, statusCode: null, errorKind: 'network' });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('reads a bounded part of a large answer and keeps a 1 KiB excerpt', async () => {
    receiver.respond((_request, response) => {
      response.writeHead(500, { 'retry-after': '30' });
      response.end('x'.repeat(5 * 1024 * 1024));
    });
    const result = await sendWebhook(receiver.url, {}, '{}', {
      timeoutMs: 5000,
      allowedCidrs: allowLoopback,
    });
    expect(result).toMatchObject({ ok: false, statusCode: 500, errorKind: 'http', retryAfterMs: 30_000 });
    expect(result.responseExcerpt).toHaveLength(1024);
  });

  it('refuses schemes other than http and https', async () => {
    const result = await sendWebhook('ftp://127.0.0.1/x', {}, '{}', {
      timeoutMs: 2000,
      allowedCidrs: allowLoopback,
    });
    expect(result).toMatchObject({ ok: false, errorKind: 'invalid_url' });
  });
});
