import { decryptSecret, encryptSecret, type PrismaClient } from '@recordbase/db';
import {
  createSqlRoleDdl,
  newSqlRolePassword,
  SQL_ROLE_LOG_SETTINGS,
  type SqlRoleLimits,
  scramVerifier,
  sqlRoleName,
  sqlRoleSettingsDdl,
} from '@recordbase/db/physical';
import type { DatabaseRef } from '../access';
import { lockSqlViews, lockUntilCommit, noteDatabaseChange, rebuildChangedSqlViews } from './views';

/** What a connection for one database's queries logs in with. */
export interface SqlCredentials {
  databaseId: string;
  user: string;
  password: string;
}

export interface SqlRoles {
  /** The database's role, created with its views on the first query; kept per process after. */
  credentials(database: Pick<DatabaseRef, 'id' | 'schemaName'>): Promise<SqlCredentials>;
}

/**
 * The role's transactions wait for a connection as a request does, and run a few statements under
 * a lock: room enough when the pool is busy, never unbounded.
 */
const ROLE_TX_OPTIONS = { maxWait: 5_000, timeout: 15_000 } as const;

/** Databases whose credentials a process keeps; each is a few dozen bytes. */
const MAX_KEPT_CREDENTIALS = 10_000;

/**
 * The login role of each database's read-only SQL (packages/db sql-roles.ts). A role, once made,
 * lives as long as its database (deleteDatabase drops it), so what a process learnt of it stays true.
 */
export function createSqlRoles(prisma: PrismaClient, secretKey: Buffer, limits: SqlRoleLimits): SqlRoles {
  const known = new Map<string, SqlCredentials>();
  let logSettings: Promise<string[]> | undefined;
  /** Which of the log settings this service's own role may give (once per process). */
  const settableLogSettings = () => {
    logSettings ??= prisma
      .$queryRawUnsafe<{ name: string }[]>(
        `SELECT name FROM unnest($1::text[]) AS name WHERE has_parameter_privilege(name, 'SET')`,
        Object.keys(SQL_ROLE_LOG_SETTINGS),
      )
      .then((rows) => rows.map((row) => row.name))
      .catch((error: unknown) => {
        logSettings = undefined;
        throw error;
      });
    return logSettings;
  };

  const remember = (credentials: SqlCredentials) => {
    if (known.size >= MAX_KEPT_CREDENTIALS) known.delete(known.keys().next().value as string);
    known.set(credentials.databaseId, credentials);
    return credentials;
  };
  const toCredentials = (databaseId: string, row: { roleName: string; passwordEncrypted: string }) => ({
    databaseId,
    user: row.roleName,
    password: decryptSecret(secretKey, row.passwordEncrypted),
  });

  const learn = async (database: Pick<DatabaseRef, 'id' | 'schemaName'>): Promise<SqlCredentials> => {
    const row = await prisma.databaseSqlRole.findUnique({ where: { databaseId: database.id } });
    const allowedLogSettings = await settableLogSettings();
    if (row) {
      // The limits of this process's configuration, which may have changed since the role was made.
      await prisma.$transaction(async (tx) => {
        // PostgreSQL refuses two concurrent changes of one role ("tuple concurrently updated").
        await lockUntilCommit(tx, `sql-role:${database.id}`);
        for (const statement of sqlRoleSettingsDdl(database.id, limits, allowedLogSettings))
          await tx.$executeRawUnsafe(statement);
      }, ROLE_TX_OPTIONS);
      return remember(toCredentials(database.id, row));
    }
    // Under the database's view lock, as a schema change: the role is made and granted the
    // views in one transaction, and a concurrent first query (another process's) waits and finds
    // it made, with its views, which it leaves as they are.
    const made = await prisma.$transaction(async (tx) => {
      await lockSqlViews(tx, database.id);
      let existing = await tx.databaseSqlRole.findUnique({ where: { databaseId: database.id } });
      if (!existing) {
        await noteDatabaseChange(tx, database);
        const password = newSqlRolePassword();
        const [current] = await tx.$queryRawUnsafe<{ name: string }[]>('SELECT current_database() AS name');
        const pgDatabase = current?.name ?? '';
        for (const statement of createSqlRoleDdl(
          database.id,
          scramVerifier(password),
          limits,
          pgDatabase,
          allowedLogSettings,
        )) {
          await tx.$executeRawUnsafe(statement);
        }
        existing = await tx.databaseSqlRole.create({
          data: {
            databaseId: database.id,
            roleName: sqlRoleName(database.id),
            passwordEncrypted: encryptSecret(secretKey, password),
          },
        });
      }
      await rebuildChangedSqlViews(tx);
      return existing;
    }, ROLE_TX_OPTIONS);
    return remember(toCredentials(database.id, made));
  };

  // A database's first queries in this process learn its role once, together: each would
  // otherwise hold a pooled connection in its own transaction, waiting for the same lock, and a
  // burst of them would take every connection of the pool from every other request.
  const learning = new Map<string, Promise<SqlCredentials>>();
  return {
    credentials(database) {
      const kept = known.get(database.id);
      if (kept) return Promise.resolve(kept);
      let first = learning.get(database.id);
      if (!first) {
        first = learn(database).finally(() => learning.delete(database.id));
        learning.set(database.id, first);
      }
      return first;
    },
  };
}
