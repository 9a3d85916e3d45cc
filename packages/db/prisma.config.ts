import { defineConfig } from 'prisma/config';

// Only `prisma generate` runs here: migrations are plain SQL in ./migrations applied by dbmate,
// because the Prisma schema engine cannot be downloaded on our machines.
export default defineConfig({
  schema: 'prisma/schema.prisma',
});
