import type pg from 'pg';

/**
 * The PostgreSQL server the soak ran on, as far as it shapes the figures. Without autovacuum
 * (this machine's shared server turns it off for CI), every update and delete leaves a dead row
 * that each later scan of the table reads again, and the lists, aggregates and SQL slow down
 * minute by minute; with it, as in production, they stay flat.
 */
export interface PostgresFigures {
  version: string;
  autovacuum: string;
  /**
   * The soak table's rows at the end of the load, as PostgreSQL's statistics count them (an
   * estimate; backends report theirs within seconds).
   */
  liveRows: number;
  deadRows: number;
}

export async function postgresFigures(db: pg.Client, tableId: string): Promise<PostgresFigures> {
  const settings = await db.query<{ version: string; autovacuum: string }>(
    "SELECT current_setting('server_version') AS version, current_setting('autovacuum') AS autovacuum",
  );
  const rows = await db.query<{ live: string; dead: string }>(
    'SELECT n_live_tup AS live, n_dead_tup AS dead FROM pg_stat_user_tables WHERE relname = $1',
    [tableId],
  );
  return {
    version: settings.rows[0]!.version,
    autovacuum: settings.rows[0]!.autovacuum,
    liveRows: Number(rows.rows[0]?.live ?? Number.NaN),
    deadRows: Number(rows.rows[0]?.dead ?? Number.NaN),
  };
}

/** The read-only SQL roles' backends on the soak's database (their names: sql-roles.ts). */
export interface QueryRoleBackends {
  /** Running a statement (not idle): none may be, once every query was answered. */
  running: { pid: number; role: string; state: string; seconds: number; query: string }[];
  /** Idle connections records-api keeps for the next queries. */
  idle: number;
}

export async function queryRoleBackends(db: pg.Client): Promise<QueryRoleBackends> {
  const rows = await db.query<{ pid: number; role: string; state: string; seconds: number; query: string }>(
    `SELECT pid, usename AS role, coalesce(state, '') AS state,
            coalesce(extract(epoch FROM now() - query_start), 0)::float8 AS seconds, left(query, 200) AS query
       FROM pg_stat_activity
      WHERE datname = current_database() AND usename LIKE 'rb\\_sql\\_%'`,
  );
  return {
    running: rows.rows.filter((row) => row.state !== 'idle'),
    idle: rows.rows.filter((row) => row.state === 'idle').length,
  };
}
