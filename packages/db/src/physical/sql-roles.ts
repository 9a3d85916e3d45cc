import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { quoteIdent, quoteLiteral, schemaNameForDatabase } from './naming';
import { sqlViewSchemaName } from './sql-views';

/**
 * The login role read-only SQL runs as for one database. It can read that database's views
 * (sql-views.ts) and nothing else, belongs to no role, and so has no way to a stronger one:
 * SET ROLE, SET SESSION AUTHORIZATION and set_config('role', ...) are refused by PostgreSQL.
 * Its settings are the role's own (ALTER ROLE ... SET), so they hold whatever a client asks.
 */

export function sqlRoleName(databaseId: string): string {
  return schemaNameForDatabase(databaseId).replace(/^base_/, 'rb_sql_');
}

/** A fresh password; the service keeps it encrypted, PostgreSQL only its SCRAM verifier. */
export function newSqlRolePassword(): string {
  return randomBytes(32).toString('base64url');
}

const SCRAM_ITERATIONS = 4096;

/**
 * The SCRAM-SHA-256 verifier of a password (RFC 5802, 7677), as PostgreSQL stores it: handing
 * PostgreSQL the verifier rather than the password keeps the password out of its logs.
 * The passwords are base64url, which SASLprep leaves as they are.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16)): string {
  const salted = pbkdf2Sync(password, salt, SCRAM_ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${SCRAM_ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

export interface SqlRoleLimits {
  /** Connections the role may hold at once, across every replica of the service. */
  connectionLimit: number;
  statementTimeoutMs: number;
  /** Disk a query may spill to (sorts, hashes) before PostgreSQL stops it. */
  tempFileLimitKb: number;
}

/**
 * `pgDatabase` names the PostgreSQL database in the role's comment, for sweeping stray roles;
 * `logSettings` are those of SQL_ROLE_LOG_SETTINGS the service may give (sqlRoleSettingsDdl).
 */
export function createSqlRoleDdl(
  databaseId: string,
  verifier: string,
  limits: SqlRoleLimits,
  pgDatabase: string,
  logSettings: readonly string[] = [],
): string[] {
  const role = quoteIdent(sqlRoleName(databaseId));
  return [
    `CREATE ROLE ${role} LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS CONNECTION LIMIT ${Math.trunc(limits.connectionLimit)} PASSWORD ${quoteLiteral(verifier)}`,
    `COMMENT ON ROLE ${role} IS ${quoteLiteral(`${SQL_ROLE_COMMENT_PREFIX}${pgDatabase}`)}`,
    ...sqlRoleSettingsDdl(databaseId, limits, logSettings),
  ];
}

/**
 * Keeps the role's statements and errors out of the server log: an error can quote a value of up
 * to 1 GB whole, and a tenant could send one per query. The role's own errors reach it in the
 * answer; FATAL and PANIC, which are short and the operator's concern, are still logged. Only a
 * superuser, or a role granted SET on them (PostgreSQL 15), may give a role these, so each is
 * applied when the service may.
 */
export const SQL_ROLE_LOG_SETTINGS: Readonly<Record<string, string>> = {
  log_min_messages: quoteLiteral('fatal'),
  log_min_error_statement: quoteLiteral('panic'),
  log_min_duration_statement: '-1',
  log_statement: quoteLiteral('none'),
};

/** The comment every such role carries: the prefix, then its PostgreSQL database's name. */
export const SQL_ROLE_COMMENT_PREFIX = 'recordbase read-only SQL role of database ';

/**
 * How often a running query's backend checks that its client is still there, and ends (FATAL,
 * which nothing in a query can catch) if not: a service that died mid-query leaves nothing running.
 */
const CLIENT_CONNECTION_CHECK_INTERVAL = '1s';

/** The role's settings, applied at every login; run again when the service's limits change. */
export function sqlRoleSettingsDdl(
  databaseId: string,
  limits: SqlRoleLimits,
  logSettings: readonly string[] = [],
): string[] {
  const role = quoteIdent(sqlRoleName(databaseId));
  // Values as SQL: literals quoted, the search path a list of identifiers.
  const settings: [string, string][] = [
    ['default_transaction_read_only', 'on'],
    ['statement_timeout', quoteLiteral(`${Math.trunc(limits.statementTimeoutMs)}ms`)],
    ['idle_in_transaction_session_timeout', quoteLiteral(`${Math.trunc(limits.statementTimeoutMs) * 2}ms`)],
    ['temp_file_limit', quoteLiteral(`${Math.trunc(limits.tempFileLimitKb)}kB`)],
    ['search_path', quoteIdent(sqlViewSchemaName(databaseId))],
    ['TimeZone', quoteLiteral('UTC')],
    ['DateStyle', quoteLiteral('ISO, YMD')],
    ['IntervalStyle', quoteLiteral('iso_8601')],
    ['extra_float_digits', '1'],
    ['bytea_output', quoteLiteral('hex')],
    ['client_connection_check_interval', quoteLiteral(CLIENT_CONNECTION_CHECK_INTERVAL)],
    // Bound parameters are never quoted in the log beside an error.
    ['log_parameter_max_length_on_error', '0'],
    ...logSettings.flatMap((name): [string, string][] => {
      const value = SQL_ROLE_LOG_SETTINGS[name];
      return value === undefined ? [] : [[name, value]];
    }),
  ];
  return [
    `ALTER ROLE ${role} CONNECTION LIMIT ${Math.trunc(limits.connectionLimit)}`,
    ...settings.map(([name, value]) => `ALTER ROLE ${role} SET ${name} = ${value}`),
  ];
}

/** After every rebuild of the views: dropping their schema dropped the grants with it. */
export function grantSqlViewsDdl(databaseId: string): string[] {
  const role = quoteIdent(sqlRoleName(databaseId));
  const views = quoteIdent(sqlViewSchemaName(databaseId));
  return [
    `GRANT USAGE ON SCHEMA ${views} TO ${role}`,
    `GRANT SELECT ON ALL TABLES IN SCHEMA ${views} TO ${role}`,
  ];
}

/** Ends the role's sessions, revokes what it was granted here, and drops it. */
export function dropSqlRoleDdl(databaseId: string): string[] {
  const name = sqlRoleName(databaseId);
  const role = quoteIdent(name);
  return [
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${quoteLiteral(name)}`,
    `DROP OWNED BY ${role}`,
    `DROP ROLE ${role}`,
  ];
}
