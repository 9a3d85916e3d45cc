// Runs `prisma generate` offline. The Prisma 7 CLI insists on locating a schema-engine binary for
// every command, and its download host is unreachable from our machines; generate never uses it,
// so any existing file satisfies the check.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
env.CHECKPOINT_DISABLE = '1';
const result = spawnSync(
  process.execPath,
  [join(packageDir, 'node_modules/prisma/build/index.js'), 'generate'],
  {
    cwd: packageDir,
    env,
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
