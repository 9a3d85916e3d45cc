import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import pg from 'pg';

/**
 * node-postgres reads each protocol message whole and turns its values into strings before any
 * cap of ours applies. A message past V8's longest string (a value such as repeat('x', 6e8), or
 * an error quoting one) then throws inside the socket's data handler, where nothing can catch it,
 * and the process dies. So every connection's incoming messages are bounded here: the 5-byte
 * header of a message announces its length, and one longer than the connection's bound ends the
 * connection before a byte of its body is kept. Its queries fail with MessageTooLarge, which says
 * SQLSTATE 54000 (program_limit_exceeded) as PostgreSQL's own refusals of a size do, so every
 * caller already answers it as a request too large (400), never a 500.
 */

/** The bound of every connection that was not given its own: far below V8's ~512M-character strings. */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

const HEADER_BYTES = 5;

const MESSAGE_KINDS: Record<string, string> = {
  D: 'a row',
  E: 'an error message',
  N: 'a notice',
  A: 'a notification',
};

const megabytes = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024))} MB`;

export class MessageTooLarge extends Error {
  /** As PostgreSQL's program_limit_exceeded, so that it is classified with the other sizes refused. */
  readonly code = '54000';

  constructor(
    readonly kind: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `${kind.charAt(0).toUpperCase()}${kind.slice(1)} from the database is ${megabytes(bytes)}, past the ${megabytes(maxBytes)} one message may be`,
    );
    this.name = 'MessageTooLarge';
  }
}

const bounds = new WeakMap<object, number>();

/** Gives one client a bound of its own (before or after it connects). */
export function boundMessages(client: pg.Client | pg.PoolClient, maxBytes: number): void {
  const connection = (client as unknown as { connection?: object }).connection;
  if (connection) bounds.set(connection, maxBytes);
}

/** Counts message boundaries across chunks; the first header past `maxBytes()` is reported. */
export function messageScanner(maxBytes: () => number) {
  const header = Buffer.alloc(HEADER_BYTES);
  let headerFilled = 0;
  let bodyLeft = 0;
  return (chunk: Buffer): MessageTooLarge | null => {
    let offset = 0;
    while (offset < chunk.length) {
      if (bodyLeft > 0) {
        const taken = Math.min(bodyLeft, chunk.length - offset);
        bodyLeft -= taken;
        offset += taken;
        continue;
      }
      let type: number;
      let length: number;
      if (headerFilled === 0 && offset + HEADER_BYTES <= chunk.length) {
        // The usual case: the whole header in this chunk, read in place.
        type = chunk[offset] as number;
        length = chunk.readUInt32BE(offset + 1);
        offset += HEADER_BYTES;
      } else {
        const copied = chunk.copy(header, headerFilled, offset, offset + HEADER_BYTES - headerFilled);
        headerFilled += copied;
        offset += copied;
        if (headerFilled < HEADER_BYTES) break;
        headerFilled = 0;
        type = header[0] as number;
        length = header.readUInt32BE(1);
      }
      // The length counts itself but not the type byte.
      const limit = maxBytes();
      if (length + 1 > limit) {
        const kind = MESSAGE_KINDS[String.fromCharCode(type)] ?? 'a message';
        return new MessageTooLarge(kind, length + 1, limit);
      }
      bodyLeft = length - 4;
    }
    return null;
  };
}

interface ConnectionInternals {
  attachListeners(stream: Duplex): void;
}

const INSTALLED = Symbol.for('recordbase.pg-message-bound');

/**
 * Puts the scanner between the socket and pg's parser, which reads nothing but the stream's
 * `data` and `end`. Installed once per copy of pg (Prisma's adapter shares this one).
 */
function install(): void {
  const prototype = (pg as unknown as { Connection: { prototype: ConnectionInternals } }).Connection
    .prototype;
  const marked = prototype as unknown as Record<symbol, boolean>;
  if (marked[INSTALLED]) return;
  marked[INSTALLED] = true;
  const attach = prototype.attachListeners;
  prototype.attachListeners = function attachBounded(this: object, stream: Duplex) {
    const scan = messageScanner(() => bounds.get(this) ?? DEFAULT_MAX_MESSAGE_BYTES);
    const parserSide = new EventEmitter();
    stream.on('data', (chunk: Buffer) => {
      const tooLarge = scan(chunk);
      if (tooLarge) stream.destroy(tooLarge);
      else parserSide.emit('data', chunk);
    });
    stream.on('end', () => parserSide.emit('end'));
    attach.call(this, parserSide as unknown as Duplex);
  };
}

install();
