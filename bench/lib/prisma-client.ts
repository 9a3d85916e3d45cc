import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Imported first by a suite's main.ts: the services and the database helpers load @recordbase/db, whose
 * Prisma client is generated, not installed. `npm start`, `npm test` and `npm run check`
 * generate it; this makes a suite (`npm run bench:uploads`, `bench:imports`) work straight after `pnpm install` as well.
 */

const dbDir = join(__dirname, '..', '..', 'packages', 'db');
if (!existsSync(join(dbDir, 'src', 'generated', 'prisma', 'client.ts'))) {
  console.log('generating the Prisma client (packages/db) …');
  const result = spawnSync(process.execPath, [join(dbDir, 'scripts', 'generate.mjs')], {
    cwd: dbDir,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
