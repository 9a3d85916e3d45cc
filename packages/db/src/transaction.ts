import type pg from 'pg';
import type { Connections } from './cancellation';

export interface TransactionOptions {
  /** Raises (or lowers) the statement timeout for this transaction only. */
  statementTimeoutMs?: number;
}

/** Runs `work` in a transaction on one pooled connection: commit on success, rollback on any throw. */
export async function withTransaction<T>(
  pool: Pick<Connections, 'connect'>,
  work: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  try {
    // One round trip: a simple query may carry several statements when it has no parameters.
    await client.query(
      options.statementTimeoutMs === undefined
        ? 'BEGIN'
        : `BEGIN; SET LOCAL statement_timeout = ${Math.max(0, Math.trunc(options.statementTimeoutMs))}`,
    );
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
