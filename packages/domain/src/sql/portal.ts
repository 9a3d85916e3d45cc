import type { SqlParam } from '@recordbase/contracts/sql';

/**
 * One statement through PostgreSQL's extended protocol, which takes exactly one statement, with
 * its parameters bound, its rows fetched from the portal in chunks so that neither a row limit nor
 * a byte cap is passed by more than a chunk: a query yielding millions of rows is read no further.
 * It is handed to pg's `client.query`, which routes the protocol's messages to its handlers.
 */

/** A column as the server describes it: its name and type (oid and modifier). */
export interface PortalField {
  name: string;
  dataTypeID: number;
  dataTypeModifier: number;
}

export interface PortalResult {
  fields: PortalField[];
  /** Values as PostgreSQL's text output, null for NULL. */
  rows: (string | null)[][];
  /** More rows existed than were kept, by the row limit or the byte cap. */
  truncated: boolean;
  /** The command tag's verb, such as SELECT; null for an empty query. */
  command: string | null;
}

export interface PortalLimits {
  maxRows: number;
  /** Of the values' text; rows past it are dropped and the result marked truncated. */
  maxBytes: number;
}

/** A COPY reached the client, which cannot be read through this route. */
export class CopyRefused extends Error {
  constructor() {
    super('COPY is not available through this route: use SELECT');
  }
}

/** The pieces of pg's Connection a portal writes to. */
interface ProtocolWriter {
  parse(message: { text: string }): void;
  bind(message: { values: (string | null)[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  flush(): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

const FIRST_CHUNK_ROWS = 100;
const MAX_CHUNK_ROWS = 1000;
/** What a value costs beyond its text once in JSON: quotes, a comma. */
const VALUE_OVERHEAD_BYTES = 3;

const bound = (value: SqlParam): string | null =>
  value === null ? null : typeof value === 'string' ? value : String(value);

export class SqlPortal {
  readonly result: Promise<PortalResult>;
  private resolve!: (result: PortalResult) => void;
  private reject!: (error: unknown) => void;
  private connection: ProtocolWriter | null = null;
  private fields: PortalField[] = [];
  private readonly rows: (string | null)[][] = [];
  private bytes = 0;
  private largestRowBytes = 1;
  private truncated = false;
  private command: string | null = null;
  private copyRefused = false;
  private synced = false;
  private settled = false;

  constructor(
    private readonly text: string,
    private readonly values: readonly SqlParam[],
    private readonly limits: PortalLimits,
    /** Called once when COPY data starts to flow: the caller cancels the statement. */
    private readonly onCopyOut: () => void,
  ) {
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Settled by the handlers; a caller awaiting `result` sees the outcome.
    this.result.catch(() => {});
  }

  submit(connection: ProtocolWriter): void {
    this.connection = connection;
    connection.parse({ text: this.text });
    connection.bind({ values: this.values.map(bound) });
    connection.describe({ type: 'P', name: '' });
    this.fetch(Math.min(FIRST_CHUNK_ROWS, this.limits.maxRows + 1));
  }

  handleRowDescription(message: { fields: PortalField[] }): void {
    this.fields = message.fields.map(({ name, dataTypeID, dataTypeModifier }) => ({
      name,
      dataTypeID,
      dataTypeModifier,
    }));
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.truncated || this.copyRefused) return;
    if (this.rows.length >= this.limits.maxRows) {
      this.truncated = true;
      return;
    }
    let rowBytes = 0;
    for (const value of message.fields) rowBytes += (value?.length ?? 4) + VALUE_OVERHEAD_BYTES;
    if (this.bytes + rowBytes > this.limits.maxBytes) {
      this.truncated = true;
      return;
    }
    this.bytes += rowBytes;
    if (rowBytes > this.largestRowBytes) this.largestRowBytes = rowBytes;
    this.rows.push(message.fields);
  }

  handlePortalSuspended(): void {
    if (this.truncated) this.sync();
    else this.fetch(this.nextChunkRows());
  }

  handleCommandComplete(message: { text: string }): void {
    this.command = message.text.split(' ', 1)[0] ?? null;
    this.sync();
  }

  handleEmptyQuery(): void {
    this.sync();
  }

  handleCopyInResponse(connection: ProtocolWriter): void {
    this.copyRefused = true;
    connection.sendCopyFail(new CopyRefused().message);
  }

  handleCopyData(): void {
    if (this.copyRefused) return;
    this.copyRefused = true;
    this.onCopyOut();
  }

  /** pg has already forgotten this query when it calls this: no ReadyForQuery will reach us. */
  handleError(error: unknown): void {
    this.sync();
    this.settle(() => this.reject(this.copyRefused ? new CopyRefused() : error));
  }

  handleReadyForQuery(): void {
    this.settle(() => {
      if (this.copyRefused) this.reject(new CopyRefused());
      else
        this.resolve({
          fields: this.fields,
          rows: this.rows,
          truncated: this.truncated,
          command: this.command,
        });
    });
  }

  /** One row more than the limit tells whether more exist; the byte cap bounds a chunk too. */
  private nextChunkRows(): number {
    const rowsLeft = this.limits.maxRows + 1 - this.rows.length;
    const rowsThatFit = Math.floor((this.limits.maxBytes - this.bytes) / this.largestRowBytes);
    return Math.max(1, Math.min(rowsLeft, MAX_CHUNK_ROWS, rowsThatFit));
  }

  private fetch(rows: number): void {
    const connection = this.connection as ProtocolWriter;
    connection.execute({ portal: '', rows });
    connection.flush();
  }

  /** Ends the statement (after an error, the server skips to it); it answers with ReadyForQuery. */
  private sync(): void {
    if (this.synced || !this.connection) return;
    this.synced = true;
    try {
      this.connection.sync();
    } catch {
      // The connection is gone; pg fails every query on it, and the caller discards it.
    }
  }

  private settle(outcome: () => void): void {
    if (this.settled) return;
    this.settled = true;
    outcome();
  }
}
