import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Named statements for the few large statements a write runs again and again with the same text
 * (a refresh of the records linking to a changed record): PostgreSQL parses and plans such a
 * statement once per connection instead of on every run, ~2 ms of a refresh of 100 records.
 * PostgreSQL keeps each one in the connection's backend until the connection ends, so a
 * connection holds at most MAX_NAMED_PER_CONNECTION of them; past that, statements run unnamed,
 * planned each time as before.
 */

const MAX_NAMED_PER_CONNECTION = 32;

/**
 * Of those, the most a connection gives texts that vary with a client's input (a listing's
 * filterByFormula, whose literals are written into the text): a client repeating one formula, as a
 * dashboard does, has it named; varied formulas cannot take the names the repeating shapes use.
 */
export const MAX_VARYING_NAMED_PER_CONNECTION = 8;

const namedBy = new WeakMap<object, Set<string>>();
const varyingBy = new WeakMap<object, Set<string>>();

export interface NamedOptions {
  /** The text varies with the client's input: it is named within MAX_VARYING_NAMED_PER_CONNECTION. */
  varying?: boolean;
}

type Client = Pick<pg.PoolClient, 'query'>;
/** A pool, or a request's share of one (cancellablePool): each query takes a connection of it. */
type Connections = Pick<pg.Pool, 'query' | 'connect'>;

/**
 * Runs the statement named after its text on `client`; given a pool, on a connection taken from
 * it, since PostgreSQL keeps named statements per connection and MAX_NAMED_PER_CONNECTION counts
 * them there.
 */
export async function queryNamed<Row extends pg.QueryResultRow>(
  client: Client | Connections,
  text: string,
  values: unknown[],
  options: NamedOptions = {},
): Promise<pg.QueryResult<Row>> {
  // A connection (a pg.Client, a pool's too) knows its backend's process id; anything else with
  // connect() hands connections out. Asked of the object, not of its class: a second copy of pg
  // would make instanceof fail.
  if (!('processID' in client) && 'connect' in client) {
    const connection = await client.connect();
    try {
      return await queryNamedOn<Row>(connection, text, values, options);
    } finally {
      connection.release();
    }
  }
  return queryNamedOn<Row>(client, text, values, options);
}

function setOf(sets: WeakMap<object, Set<string>>, client: Client): Set<string> {
  let set = sets.get(client);
  if (!set) {
    set = new Set();
    sets.set(client, set);
  }
  return set;
}

function queryNamedOn<Row extends pg.QueryResultRow>(
  client: Client,
  text: string,
  values: unknown[],
  options: NamedOptions,
): Promise<pg.QueryResult<Row>> {
  const names = setOf(namedBy, client);
  // The text names the statement: the same name never stands for two texts on a connection.
  const name = `rb_${createHash('sha256').update(text).digest('base64url').slice(0, 40)}`;
  if (!names.has(name)) {
    if (names.size >= MAX_NAMED_PER_CONNECTION) return client.query<Row>(text, values);
    if (options.varying) {
      const varying = setOf(varyingBy, client);
      if (varying.size >= MAX_VARYING_NAMED_PER_CONNECTION) return client.query<Row>(text, values);
      varying.add(name);
    }
    names.add(name);
  }
  return client.query<Row>({ name, text, values });
}
