import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

/**
 * The parent's side of the local receiver (receiver-child.ts). It runs in its own process so that
 * verifying signatures and answering does not take CPU from the load generator's event loop
 * (which would delay the requests of the open-loop schedule); both still share the machine.
 */

/** [event id (evt_…), webhook id, first record id, received at (ms), event timestamp (ms), attempt] */
export type Receipt = [string, number, string, number, number, number];

export interface ReceiverStats {
  requests: number;
  verified: number;
  invalid: number;
  unknownPath: number;
  firstInvalid: string | null;
}

export type ReceiverMessage =
  | { type: 'ready'; port: number }
  | { type: 'hooks-ready' }
  | { type: 'receipts'; receipts: Receipt[]; stats: ReceiverStats }
  | { type: 'flushed'; stats: ReceiverStats };

export type ParentMessage =
  | {
      type: 'hooks';
      verify: 'standardwebhooks' | 'crypto';
      hooks: { index: number; webhookId: number; secret: string }[];
    }
  | { type: 'flush' };

export interface Receiver {
  pid: number;
  /** The URL of webhook number `index` (each webhook has its own path). */
  urlFor(index: number): string;
  register(hooks: { index: number; webhookId: number; secret: string }[]): Promise<void>;
  /** Every verified receipt so far, in arrival order (batched every 200 ms). */
  readonly receipts: Receipt[];
  /** Asks for the receipts not yet sent; resolves with the final counters. */
  flush(): Promise<ReceiverStats>;
  close(): Promise<void>;
}

export function startReceiver(verify: 'standardwebhooks' | 'crypto'): Promise<Receiver> {
  const child: ChildProcess = fork(join(__dirname, 'receiver-child.ts'), [], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const receipts: Receipt[] = [];
  const waiting = new Map<string, Array<(message: ReceiverMessage) => void>>();
  const next = (type: ReceiverMessage['type']) =>
    new Promise<ReceiverMessage>((resolve) => {
      waiting.set(type, [...(waiting.get(type) ?? []), resolve]);
    });
  child.on('message', (message: ReceiverMessage) => {
    if (message.type === 'receipts') {
      for (const receipt of message.receipts) receipts.push(receipt);
    }
    const resolvers = waiting.get(message.type);
    if (resolvers?.length) resolvers.shift()?.(message);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`receiver exited with code ${code} before listening`)));
    void next('ready').then((message) => {
      child.removeAllListeners('exit');
      const port = message.type === 'ready' ? message.port : 0;
      resolve({
        pid: child.pid ?? 0,
        urlFor: (index) => `http://127.0.0.1:${port}/h/${index}`,
        async register(hooks) {
          const ready = next('hooks-ready');
          child.send({ type: 'hooks', verify, hooks } satisfies ParentMessage);
          await ready;
        },
        receipts,
        async flush() {
          const flushed = next('flushed');
          child.send({ type: 'flush' } satisfies ParentMessage);
          const message = await flushed;
          return message.type === 'flushed'
            ? message.stats
            : { requests: 0, verified: 0, invalid: 0, unknownPath: 0, firstInvalid: null };
        },
        close: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.disconnect();
          }),
      });
    });
  });
}
