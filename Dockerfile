# syntax=docker/dockerfile:1
# taskgate container image. The image holds exactly the npm package (what `npm pack` ships:
# dist/, bin/, config/, the console's files, README.md, LICENSE; see "files" in package.json) plus its production
# dependencies from the lockfile. Two stages:
#   build    installs everything, and `npm pack` compiles dist/ (prepack) and packs the package;
#   runtime  unpacks it and runs `npm ci --omit=dev`: no tsx, esbuild, TypeScript or @types.
# test/e2e/npmPackage.test.ts builds this same runtime layout (pack, unpack, npm ci --omit=dev,
# rm -rf node_modules/@types) and starts the CLI from it; no container engine runs in CI.
#
#   docker build -t taskgate .
#   docker run --rm -p 3000:3000 \
#     -e TASKGATE_UPSTREAM_URL=http://host.docker.internal:8080/mcp \
#     -e TASKGATE_AUTH_MODE=tokens -e TASKGATE_AUTH_TOKENS="<sha256hex>:alice" \
#     taskgate
#
# Configuration: the image sets one TASKGATE_* variable, the one thing a container needs
# differently from a laptop: TASKGATE_HOST=0.0.0.0 (inside a container, loopback is unreachable
# from outside). It is an environment variable, not an argument, so it holds for whatever command
# you run (`taskgate serve --config …`, `taskgate demo --port 3000`); -e TASKGATE_HOST=… or --host
# changes it, and the config.loaded line at start names it when it replaces a file's host.
# Everything else comes from you: a mounted config file
# (-v ./taskgate.yaml:/etc/taskgate.yaml -e TASKGATE_CONFIG=/etc/taskgate.yaml), variables, flags.

# The Node major CI tests (package.json engines: >=20.10).
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile and pack -------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts are needed to compile (the only one in the tree is esbuild's, used by tsx).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE ./
COPY src ./src
COPY examples ./examples
COPY bin ./bin
COPY config ./config
COPY console ./console
RUN npm pack --pack-destination /tmp \
 && mkdir /package \
 && tar -xzf /tmp/taskgate-*.tgz -C /package --strip-components=1

# ---- runtime: the package + production dependencies ----------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /package ./
COPY package-lock.json ./
# Nothing loads @types/* at run time: removed should a production dependency declare one.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/@types \
 && npm cache clean --force
# The file store's default path is .taskgate/tasks.json under the working directory; make it
# writable by the unprivileged user (mount a volume here to keep tasks across restarts).
RUN mkdir -p /app/.taskgate && chown node:node /app/.taskgate
USER node
ENV TASKGATE_HOST=0.0.0.0
EXPOSE 3000
# /livez: the process serves HTTP. The port is the image's default (3000) unless TASKGATE_PORT or
# PORT says otherwise; a port set only in a config file needs its own --health-cmd.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const p=[process.env.TASKGATE_PORT,process.env.PORT].find((v)=>/^[0-9]+$/.test(v||''))||'3000';fetch('http://127.0.0.1:'+p+'/livez').then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/taskgate.js"]
CMD ["serve"]
