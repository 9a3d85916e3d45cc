import { migrate } from '@recordbase/db/migrate';
import { deleteKeysUnder } from '@recordbase/server-kit/redis-keys';
import pg from 'pg';

/**
 * The dedicated benchmark database, dropped and recreated for every case (a case may leave a
 * backlog of hundreds of thousands of deliveries behind), and the BullMQ keys of a case's prefix.
 */

function adminUrl(databaseUrl: string): { admin: string; name: string } {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unexpected benchmark database name "${name}"`);
  url.pathname = '/postgres';
  return { admin: url.toString(), name };
}

async function withAdmin<T>(databaseUrl: string, work: (client: pg.Client, name: string) => Promise<T>) {
  const { admin, name } = adminUrl(databaseUrl);
  const client = new pg.Client({ connectionString: admin, application_name: 'bench-webhooks-admin' });
  await client.connect();
  try {
    return await work(client, name);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  await withAdmin(databaseUrl, (client, name) =>
    client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  );
}

/** Drops the database if it exists, creates it and applies the migrations. Returns the seconds taken. */
export async function recreateDatabase(databaseUrl: string): Promise<number> {
  const started = performance.now();
  await withAdmin(databaseUrl, async (client, name) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  await migrate(databaseUrl);
  return (performance.now() - started) / 1000;
}

/** Deletes every Redis key under `prefix:` (BullMQ's queues of one case). */
export const deleteQueueKeys = deleteKeysUnder;
