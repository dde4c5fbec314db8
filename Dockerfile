# syntax=docker/dockerfile:1
# taskgate container image. Two stages: `build` compiles the TypeScript (tsconfig.build.json emits
# dist/), `runtime` holds only production dependencies, the compiled code, bin/ and config/.
# bin/taskgate.js runs dist/src/cli.js when it exists, so the image never needs tsx at run time.
#
#   docker build -t taskgate .
#   docker run --rm -p 3000:3000 \
#     -e TASKGATE_UPSTREAM_URL=http://host.docker.internal:8080/mcp \
#     -e TASKGATE_AUTH_MODE=tokens -e TASKGATE_AUTH_TOKENS="<sha256hex>:alice" \
#     -e TASKGATE_ALLOWED_HOSTS=taskgate.internal \
#     taskgate
#
# Inside the container taskgate binds 0.0.0.0:3000 (TASKGATE_HOST / TASKGATE_PORT below). Its Host
# check accepts loopback names only, so any other name clients use to reach it (a service name, a
# DNS name) must be listed in TASKGATE_ALLOWED_HOSTS. See README.md, "Running in Docker".

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: compile TypeScript to dist/ ---------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts are needed to compile (the only one in the tree is esbuild's, used by tsx).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY examples/legacy-server ./examples/legacy-server
RUN npm run build

# ---- runtime: production dependencies + compiled output ------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY config ./config
# The file store's default path is .taskgate/tasks.json under the working directory; make it
# writable by the unprivileged user (mount a volume here to keep tasks across restarts).
RUN mkdir -p /app/.taskgate && chown node:node /app/.taskgate
USER node
ENV TASKGATE_HOST=0.0.0.0 TASKGATE_PORT=3000
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TASKGATE_PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/taskgate.js"]
CMD ["serve"]
