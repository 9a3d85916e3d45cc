import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientOf } from './client';
import { type Stack, startStack } from './stack';

/**
 * Webhook receivers over HTTPS. The dispatcher verifies certificates against Node's CA store: a
 * receiver with a self-signed certificate, or one from a CA it does not know, is refused (the
 * attempt is logged with the TLS error and nothing is sent). An operator trusts a private CA
 * with NODE_EXTRA_CA_CERTS (a PEM file) in the dispatcher's environment; then that CA's
 * receivers are delivered to, and a self-signed one is still refused. Certificates are made at
 * test time with openssl. Quick; runs in `npm test`.
 */

let dir: string;
const pem = (name: string) => join(dir, name);

function openssl(...args: string[]) {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

/** A new key `<name>.key` and a certificate `<name>.crt` for it, signed by itself, valid two days. */
function selfSigned(name: string, subject: string, ...extra: string[]) {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    subject,
    ...extra,
    '-keyout',
    pem(`${name}.key`),
    '-out',
    pem(`${name}.crt`),
  );
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rb-tls-'));
  const subjectAltName = 'subjectAltName=IP:127.0.0.1,DNS:localhost';
  // A test CA, and a receiver certificate it signs.
  selfSigned('ca', '/CN=recordbase test CA');
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    pem('signed.key'),
    '-out',
    pem('signed.csr'),
  );
  writeFileSync(pem('signed.ext'), `${subjectAltName}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    pem('signed.csr'),
    '-CA',
    pem('ca.crt'),
    '-CAkey',
    pem('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    pem('signed.ext'),
    '-out',
    pem('signed.crt'),
  );
  // A self-signed receiver certificate, valid for the address in every other respect.
  selfSigned('self', '/CN=127.0.0.1', '-addext', subjectAltName);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface HttpsReceiver {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

async function startHttpsReceiver(cert: 'signed' | 'self'): Promise<HttpsReceiver> {
  const bodies: string[] = [];
  const server: Server = createServer(
    { key: readFileSync(pem(`${cert}.key`)), cert: readFileSync(pem(`${cert}.crt`)) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.end('ok');
      });
    },
  );
  // Handshakes the dispatcher aborts land here; they are the point of the test, not a failure.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/hook`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Subscribes a webhook per receiver, writes one record, and waits until each has a logged attempt. */
async function deliverOnce(stack: Stack, receivers: HttpsReceiver[]) {
  const client = clientOf(stack);
  const base = await client.bases.create({
    name: 'TLS',
    tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
  });
  const hooks = [];
  for (const receiver of receivers) {
    hooks.push(await client.webhooks.create(base.id, { url: receiver.url, events: ['record.created'] }));
  }
  await client.records.create(base.id, 'Items', { Name: 'over https' });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const logs = await Promise.all(hooks.map((hook) => client.webhooks.deliveries(base.id, hook.id)));
    if (logs.every((log) => log.length > 0)) return logs.map((log) => log[0]!);
    if (Date.now() > deadline) throw new Error('no delivery attempt was logged');
    await new Promise((done) => setTimeout(done, 200));
  }
}

describe('webhook receivers over HTTPS', () => {
  let stack: Stack | undefined;
  const receivers: HttpsReceiver[] = [];

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  it('refuses a self-signed certificate and one from an unknown CA by default', async () => {
    const self = await startHttpsReceiver('self');
    const signed = await startHttpsReceiver('signed');
    receivers.push(self, signed);
    stack = await startStack({ env: { WEBHOOK_RETRY_SCHEDULE: 'none' } });
    const [selfAttempt, signedAttempt] = await deliverOnce(stack, [self, signed]);
    for (const attempt of [selfAttempt, signedAttempt]) {
      expect(attempt?.statusCode).toBeNull();
      expect(attempt?.error?.kind).toBe('network');
    }
    expect(selfAttempt?.error?.message).toMatch(/SELF_SIGNED|self[- ]signed/i);
    expect(signedAttempt?.error?.message).toMatch(/UNABLE_TO_GET_ISSUER|issuer|UNABLE_TO_VERIFY/i);
    expect(self.bodies).toEqual([]);
    expect(signed.bodies).toEqual([]);
  });

  it('delivers to a receiver whose CA is trusted with NODE_EXTRA_CA_CERTS, and still refuses a self-signed one', async () => {
    const self = await startHttpsReceiver('self');
    const signed = await startHttpsReceiver('signed');
    receivers.push(self, signed);
    stack = await startStack({
      env: { WEBHOOK_RETRY_SCHEDULE: 'none', NODE_EXTRA_CA_CERTS: pem('ca.crt') },
    });
    const [selfAttempt, signedAttempt] = await deliverOnce(stack, [self, signed]);
    expect(signedAttempt?.statusCode).toBe(200);
    expect(signedAttempt?.error).toBeNull();
    expect(signed.bodies).toHaveLength(1);
    expect(JSON.parse(signed.bodies[0]!).type).toBe('record.created');
    expect(selfAttempt?.statusCode).toBeNull();
    expect(selfAttempt?.error?.message).toMatch(/SELF_SIGNED|self[- ]signed/i);
    expect(self.bodies).toEqual([]);
  });
});
