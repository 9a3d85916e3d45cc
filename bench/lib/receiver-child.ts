import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { ParentMessage, Receipt, ReceiverMessage, ReceiverStats } from './receiver';

/**
 * Entry of the receiver child process: an HTTP server on 127.0.0.1 that takes every webhook at
 * its own path (`/h/<index>`), verifies the Standard Webhooks signature with that webhook's
 * secret, records the receipt time (taken when the body has fully arrived, before verifying) and
 * answers 200. Receipts are sent to the parent in batches. A delivery that fails verification is
 * answered 400 and counted, never recorded as received.
 */

interface Hook {
  webhookId: number;
  verify(body: string, headers: IncomingHttpHeaders): unknown;
}

const TOLERANCE_S = 5 * 60;

/** The same check as standardwebhooks, with node:crypto's HMAC (cheaper than its pure JS SHA-256). */
function cryptoVerifier(secret: string) {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return (body: string, headers: IncomingHttpHeaders): unknown => {
    const id = headers['webhook-id'];
    const timestamp = headers['webhook-timestamp'];
    const signatures = headers['webhook-signature'];
    if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') {
      throw new Error('missing headers');
    }
    const seconds = Number.parseInt(timestamp, 10);
    if (!Number.isFinite(seconds) || Math.abs(Date.now() / 1000 - seconds) > TOLERANCE_S) {
      throw new Error('timestamp out of tolerance');
    }
    const expected = Buffer.from(
      createHmac('sha256', key).update(`${id}.${seconds}.${body}`).digest('base64'),
    );
    const matches = signatures.split(' ').some((versioned) => {
      const [version, signature] = versioned.split(',');
      const given = Buffer.from(signature ?? '');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!matches) throw new Error('no matching signature');
    return JSON.parse(body);
  };
}

function makeHook(webhookId: number, secret: string, method: 'standardwebhooks' | 'crypto'): Hook {
  if (method === 'crypto') return { webhookId, verify: cryptoVerifier(secret) };
  const webhook = new Webhook(secret);
  return {
    webhookId,
    verify: (body, headers) => webhook.verify(body, headers as Record<string, string>),
  };
}

const hooks = new Map<number, Hook>();
let pending: Receipt[] = [];
const stats: ReceiverStats = { requests: 0, verified: 0, invalid: 0, unknownPath: 0, firstInvalid: null };

const send = (message: ReceiverMessage) => process.send?.(message);

function flush(): void {
  if (pending.length === 0) return;
  send({ type: 'receipts', receipts: pending, stats });
  pending = [];
}

interface DeliveredBody {
  id: string;
  timestamp: string;
  data: { recordIds?: string[] };
  metadata: { webhookId: number; attempt: number };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const receivedAt = Date.now();
    stats.requests += 1;
    const match = /^\/h\/(\d+)$/.exec(req.url ?? '');
    const hook = match ? hooks.get(Number(match[1])) : undefined;
    if (!hook) {
      stats.unknownPath += 1;
      res.statusCode = 404;
      res.end();
      return;
    }
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      const event = hook.verify(body, req.headers) as DeliveredBody;
      if (event.metadata?.webhookId !== hook.webhookId)
        throw new Error('metadata.webhookId of another webhook');
      if (event.id !== req.headers['webhook-id']) throw new Error('body id differs from webhook-id');
      stats.verified += 1;
      pending.push([
        event.id,
        hook.webhookId,
        event.data?.recordIds?.[0] ?? '',
        receivedAt,
        Date.parse(event.timestamp),
        event.metadata.attempt,
      ]);
      res.statusCode = 200;
      res.end('ok');
    } catch (error) {
      stats.invalid += 1;
      stats.firstInvalid ??= error instanceof Error ? error.message : String(error);
      res.statusCode = 400;
      res.end('invalid signature');
    }
  });
});
// The dispatcher opens a connection per attempt; keep the accept queue deep.
server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, () => {
  const address = server.address();
  send({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
});
const timer = setInterval(flush, 200);

process.on('message', (message: ParentMessage) => {
  if (message.type === 'hooks') {
    for (const hook of message.hooks)
      hooks.set(hook.index, makeHook(hook.webhookId, hook.secret, message.verify));
    send({ type: 'hooks-ready' });
  } else if (message.type === 'flush') {
    flush();
    send({ type: 'flushed', stats });
  }
});
process.once('disconnect', () => {
  clearInterval(timer);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
