import pg from 'pg';
import type { Op } from './measure';

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * The raw SQL baseline: the same query sent straight to PostgreSQL through a pg Pool with as
 * many connections as workers. Results come back as one JSON text column (not parsed), the
 * closest equivalent of the API's body.
 */
export class SqlRunner {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, connections: number) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: connections,
      application_name: 'bench-raw-sql',
    });
    this.pool.on('error', () => {});
  }

  op(query: SqlQuery): Op {
    return async () => {
      const result = await this.pool.query<{ records: string; total?: string }>(query.text, query.values);
      const row = result.rows[0];
      if (!row) throw new Error('raw query returned no row');
      return { bytes: row.records.length + (row.total?.length ?? 0), items: 0 };
    };
  }

  /** A write: `build` makes each statement; it counts `items` rows written per statement. */
  write(build: (worker: number, sequence: number) => SqlQuery, items: number): Op {
    return async (worker, sequence) => {
      const query = build(worker, sequence);
      const result = await this.pool.query(query.text, query.values);
      if (result.rowCount !== items)
        throw new Error(`raw write touched ${result.rowCount} rows, not ${items}`);
      return { bytes: 0, items };
    };
  }

  /**
   * Several statements in one round trip, a transaction spelled out (`BEGIN; …; COMMIT`), as a
   * hand-written application would send them; `build` makes the text (values inlined: the simple
   * query protocol takes no parameters). Nothing is read back.
   */
  script(build: (worker: number, sequence: number) => string, items = 0): Op {
    return async (worker, sequence) => {
      const client = await this.pool.connect();
      try {
        await client.query(build(worker, sequence));
      } catch (error) {
        // A statement that fails leaves the transaction open and aborted on this connection.
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      return { bytes: 0, items };
    };
  }

  /** A query read as plain rows, as psql or any client would (not as one JSON text); bytes are not counted. */
  rows(build: () => SqlQuery): Op {
    return async () => {
      const query = build();
      const result = await this.pool.query(query.text, query.values);
      if (result.rows.length === 0) throw new Error('raw query returned no row');
      return { bytes: 0, items: 0 };
    };
  }

  async once(query: SqlQuery): Promise<{ records: unknown[]; total: number | null }> {
    const result = await this.pool.query<{ records: string; total?: string }>(query.text, query.values);
    const row = result.rows[0]!;
    return {
      records: JSON.parse(row.records) as unknown[],
      total: row.total === undefined ? null : Number(row.total),
    };
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
