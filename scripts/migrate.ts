// `npm run migrate`: applies the SQL migrations to DATABASE_URL (creating the database if needed).
import { describeMigration, migrate } from '@recordbase/db/migrate';
import { checkPostgres } from '@recordbase/server-kit/dependencies';
import { commonEnvSchema, parseEnv } from '@recordbase/server-kit/env';

async function main() {
  const { DATABASE_URL } = parseEnv(commonEnvSchema);
  await checkPostgres(DATABASE_URL);
  console.log(`[recordbase] ${describeMigration(DATABASE_URL, await migrate(DATABASE_URL))}`);
}

main().catch((error: unknown) => {
  console.error(`[recordbase] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
