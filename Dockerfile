# syntax=docker/dockerfile:1
# One image per service from this file:
#   docker build --build-arg SERVICE=gateway -t team-chat/gateway .
# (SERVICE: gateway, accounts, messaging, events, scheduler). Every image also carries the admin
# CLI, so `docker compose run --rm migrate` and `kubectl exec ... -- chat <command>` work.

ARG NODE_IMAGE=node:20-alpine

# --- build: production dependencies of one service, the shared packages and the CLI ---------
FROM ${NODE_IMAGE} AS build
ARG SERVICE
RUN test -n "$SERVICE" || (echo "build with --build-arg SERVICE=<gateway|accounts|messaging|events|scheduler>" && exit 1)
RUN npm install -g pnpm@10.34.9 && npm cache clean --force
WORKDIR /app
COPY scripts/docker/build-app.sh /usr/local/bin/build-app
# Manifests first, so the dependency layer is cached across source changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/platform/package.json packages/platform/
COPY services/${SERVICE}/package.json services/${SERVICE}/
RUN build-app install "$SERVICE"
COPY packages/contracts/src packages/contracts/src
COPY packages/platform/src packages/platform/src
COPY packages/platform/migrations packages/platform/migrations
COPY scripts scripts
COPY services services
RUN build-app prune "$SERVICE"

# --- runtime ------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
ARG SERVICE
LABEL org.opencontainers.image.title="team-chat ${SERVICE}" \
      org.opencontainers.image.description="Zulip-compatible team chat server: the ${SERVICE} service"
# tsx keeps its compile cache in TMPDIR: mount a writable emptyDir/tmpfs there when the root
# filesystem is read-only.
ENV NODE_ENV=production \
    SERVICE=${SERVICE} \
    HOST=0.0.0.0 \
    UPLOADS_DIR=/data/uploads \
    TMPDIR=/tmp \
    PATH=/app:$PATH
WORKDIR /app
COPY --from=build --chown=root:root /app /app
RUN mkdir -p /data/uploads && chown node:node /data/uploads
# The image's own uid (node, 1000): no root at run time.
USER node
# Each service has its default port (gateway 9991 ... scheduler 9995); PORT overrides it.
EXPOSE 9991 9992 9993 9994 9995
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "const p=process.env.PORT||{gateway:9991,accounts:9992,messaging:9993,events:9994,scheduler:9995}[process.env.SERVICE];fetch('http://127.0.0.1:'+p+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["sh", "-c", "exec node --import tsx services/${SERVICE}/src/main.ts"]
