# One target per service; each image holds that service's compiled JavaScript and the production
# packages it requires, nothing else (no tsx, no TypeScript, no dev dependencies, no sources):
#   docker build --target records-api -t recordbase/records-api .
# Targets: records-api, upload-service, webhook-dispatcher, import-worker, migrate (one-shot).
# scripts/build-services.mjs makes what each target copies; e2e/test/images.e2e.test.ts builds
# the same output and runs every service from it with plain node.

ARG NODE_IMAGE=node:20.19-bookworm-slim

# ---- build: install the workspace, generate the Prisma client, compile every service ----------
FROM ${NODE_IMAGE} AS build
ENV CI=true
RUN npm install --global pnpm@12.21.0
WORKDIR /src
# Dependencies first: this layer is rebuilt only when the lockfile (or a patch) changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches ./patches
RUN pnpm fetch
COPY . .
RUN pnpm install --frozen-lockfile --prefer-offline \
  && pnpm --filter @recordbase/db run generate \
  && node scripts/build-services.mjs --out /out

# ---- runtime: what every service image shares -------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# The container's network is the boundary: listen on every interface of it.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    STORAGE_DIR=/data/files
# Uploaded files (local storage driver) live on a volume mounted here; a fresh named volume takes
# this directory's owner, so it starts out writable by `node`.
RUN mkdir -p /data/files && chown node:node /data/files
WORKDIR /app

# ---- one target per service: the code is root's, read-only to the `node` user running it -------
FROM runtime AS records-api
COPY --from=build /out/records-api /app
ENV PORT=3000
EXPOSE 3000
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "main.js"]

FROM runtime AS upload-service
COPY --from=build /out/upload-service /app
ENV PORT=3001
EXPOSE 3001
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "main.js"]

FROM runtime AS webhook-dispatcher
COPY --from=build /out/webhook-dispatcher /app
ENV PORT=3002
EXPOSE 3002
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "main.js"]

# Its port serves health, readiness and metrics only.
FROM runtime AS import-worker
COPY --from=build /out/import-worker /app
ENV PORT=3003
EXPOSE 3003
USER node
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "main.js"]

# One-shot: applies the SQL migrations (dbmate, shipped in its npm package) and exits.
FROM runtime AS migrate
COPY --from=build /out/migrate /app
USER node
HEALTHCHECK NONE
CMD ["node", "bin/migrate.js"]
