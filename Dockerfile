# One image for every recordbase service; docker-compose.yml picks the service by its command:
#   node --import tsx apps/<records-api|upload-service|webhook-dispatcher>/src/main.ts
#   node --import tsx apps/records-api/src/imports/main.ts   (the import worker)
#   node scripts/recordbase.mjs migrate   (one-shot, before the services start)
FROM node:20-slim

ENV CI=true
RUN npm i -g pnpm@12.21.0

WORKDIR /app

# Dependencies first: this layer is rebuilt only when the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch

COPY . .
RUN pnpm install --frozen-lockfile --prefer-offline \
  && pnpm --filter @recordbase/db run generate

# Uploaded files live on a volume mounted here (STORAGE_DIR); the image gives it to `node` so
# a fresh named volume starts out writable by the service.
RUN mkdir -p /data/files && chown -R node:node /data

ENV NODE_ENV=production
USER node
EXPOSE 3000 3001 3002 3003
CMD ["node", "--import", "tsx", "apps/records-api/src/main.ts"]
