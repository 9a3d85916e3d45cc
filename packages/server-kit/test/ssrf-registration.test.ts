import { parseCidrList, refusedWebhookUrl } from '../src/ssrf';

/** The check a webhook's URL gets when it is registered (records-api), before any delivery. */
describe('refusedWebhookUrl', () => {
  it.each([
    ['http://10.0.0.7/hook', 'refused to connect to a private address'],
    ['http://[fd00::1]/hook', 'refused to connect to a unique-local address'],
    ['http://169.254.169.254/latest', 'refused to connect to a link-local address'],
    ['http://localhost:3000/hook', 'refused: localhost resolves to a loopback address'],
    ['https://api.LOCALHOST./x', 'refused: api.localhost. resolves to a loopback address'],
  ])('refuses %s', async (url, message) => {
    expect(await refusedWebhookUrl(url, [])).toBe(message);
  });

  it('takes an allowed range, a public address, and a host that does not resolve', async () => {
    expect(await refusedWebhookUrl('http://localhost:3000/hook', parseCidrList('127.0.0.1/32'))).toBeNull();
    expect(await refusedWebhookUrl('https://93.184.216.34/hook', [])).toBeNull();
    expect(await refusedWebhookUrl('https://receiver.invalid/hook', [])).toBeNull();
  });
});
