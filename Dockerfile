# syntax=docker/dockerfile:1
# The billing service's container image (docs/operations.md "Container"). Two stages:
#   build:   every dependency (the dashboard's Vite build needs the dev tooling), the Prisma client
#            generated, the dashboard built into dashboard/dist;
#   runtime: production dependencies only (`npm ci --omit=dev`; tsx is one of them: the service
#            runs its TypeScript through it, as `npm start` does), the sources, the migrations and
#            the built dashboard, as the unprivileged `node` user.
# The base image is pinned to the exact Node release the project is tested on (package.json
# "engines": >=20.19); bump both together.

FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
ENV CI=true
# What `npm ci` needs: the lockfile, the vendored override, and what the postinstall (Prisma
# client generation) reads.
COPY package.json package-lock.json ./
COPY vendor ./vendor
COPY scripts ./scripts
COPY prisma ./prisma
# No dependency install scripts (nothing is downloaded while installing: Prisma's engines are not
# needed, esbuild's binary comes as an optional dependency); the Prisma client is generated
# offline by the project's own script.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm run --silent generate
COPY tsconfig.json ./
COPY src ./src
COPY dashboard ./dashboard
RUN node scripts/build-dashboard.mjs --force

FROM node:20.20.2-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
COPY package.json package-lock.json ./
COPY vendor ./vendor
# No install scripts here: the Prisma client comes generated from the build stage (the generator
# is not needed at run time), and no package downloads anything while installing.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY prisma ./prisma
COPY tsconfig.json ./
COPY src ./src
COPY --from=build /app/src/generated ./src/generated
COPY --from=build /app/dashboard/dist ./dashboard/dist
# The embedded database's directory (when DATABASE_URL is not set), owned by the service's user.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 4000 9464
# Ready = the database answers and every migration is applied (GET /readyz); no curl in the slim
# image, so Node's own fetch asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains requests and jobs (SHUTDOWN_TIMEOUT_MS, default 25 s: keep it under the stop
# timeout of the orchestrator, e.g. `docker stop -t 30`). Node runs as PID 1 directly (no npm in
# between, which would not pass the signal on).
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "src/main.ts"]
