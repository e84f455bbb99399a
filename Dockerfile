# One image for every service (the compose file picks the entry point). NODE_IMAGE is the official
# Node image by default; docker-compose.local.yml builds on the local one instead (ADR 0021).
ARG NODE_IMAGE=node:24-bookworm-slim

# The workspaces' package.json files alone: the dependency layer below is built again when a manifest
# or the lockfile changes, not on every source edit.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY libs libs
COPY services services
RUN find libs services -type f ! -name package.json -delete

# The web frontend's bundle, built with the dev tooling (Vite, Preact's JSX) in a stage of
# its own: only web/dist reaches the image the fleet runs.
FROM ${NODE_IMAGE} AS web
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=manifests /app ./
RUN npm ci --no-audit --no-fund
COPY libs libs
COPY docs/openapi.json docs/openapi.json
COPY infra/web.ts infra/web.ts
COPY web web
RUN node infra/web.ts

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# Node's compile cache: a container's processes started again (a restart) skip most compiling (ADR 0047).
ENV NODE_COMPILE_CACHE=/tmp/node-compile-cache
COPY package.json package-lock.json ./
COPY --from=manifests /app ./
# Production dependencies only, no dev tooling: Node 24 runs the TypeScript itself (ADR 0001).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY schemas schemas
COPY libs libs
COPY services services
COPY --from=web /app/web/dist web/dist
# The official image's unprivileged user (uid 1000); the local node image has the same.
USER node
