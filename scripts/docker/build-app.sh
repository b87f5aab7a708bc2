#!/bin/sh
# Builds the production tree of one service image in the current directory (the Dockerfile runs
# it in /app; test/deploy checks the same tree without a container engine).
#   build-app.sh install SERVICE   after the package manifests are copied
#   build-app.sh prune SERVICE     after the sources are copied
set -eu
step=$1
service=$2
case "$service" in
  gateway | accounts | messaging | events | scheduler) ;;
  *) echo "unknown service '$service' (gateway, accounts, messaging, events, scheduler)" >&2; exit 1 ;;
esac

case "$step" in
  install)
    # Production dependencies of this service, the shared packages and the admin CLI only: the
    # test kit and the other services' dependencies stay out.
    pnpm install --prod --frozen-lockfile --prefer-offline --reporter=append-only \
      --filter team-chat --filter @chat/contracts --filter @chat/platform --filter "@chat/$service"
    ;;
  prune)
    # Every service's migrations stay (any image can run `chat migrate`); other services' code
    # and all tests go.
    for dir in services/*/; do
      if [ "$dir" != "services/$service/" ]; then
        find "$dir" -mindepth 1 -maxdepth 1 ! -name migrations ! -name package.json -exec rm -rf {} +
      fi
    done
    rm -rf "services/$service/test" scripts/docker
    find . -path ./node_modules -prune -o -name "*.test.ts" -type f -print | xargs rm -f
    # `chat <command>` anywhere in the container runs the admin CLI.
    printf '#!/bin/sh\ncd "%s" && exec node --import tsx scripts/chat.ts "$@"\n' "$(pwd)" > chat
    chmod 755 chat
    ;;
  *)
    echo "unknown step '$step' (install, prune)" >&2
    exit 1
    ;;
esac
