#!/usr/bin/env bash
# Runs the client matrix against a freshly built server, as CI does
# (.ci/run calls it): Apollo Client, urql, graphql-request, graphql-ws and
# graphql-sse, each doing queries, a mutation, a subscription fed by a REST
# write, GET with ETag revalidation and the error cases (src/matrix.mjs),
# first against the server as it starts by default, then restarted with
# the clients' manifest and PERSISTED_ONLY=true. Prints a pass/fail table
# per mode and fails when a case fails in either. Needs go, node (20.19 or
# later) and npm.
set -euo pipefail
cd "$(dirname "$0")"
started=$SECONDS

log() { printf '\n== clients: %s\n' "$*"; }

# work, db, server, get, build_server, start_server, stop_server.
source ../server.sh

# The server's signing key, known here so that the matrix can sign an
# expired token (the CLI mints tokens without expiry).
JWT_SECRET=$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')
export JWT_SECRET SERVER="$server" DATABASE_URL="$db"

log "npm ci"
npm ci --no-audit --no-fund --loglevel=error

log "build the server"
build_server

failed=0

log "default mode (SQLite, demo data)"
start_server
TOKEN=$("$server" token create --configurator 1 --database-url "$db" 2>/dev/null)
export TOKEN
PERSISTED_ONLY=false node src/matrix.mjs || failed=1
stop_server

log "PERSISTED_ONLY=true (the clients' manifest)"
manifest="$work/persisted-documents.json"
node src/manifest.mjs "$manifest"
start_server PERSISTED_DOCUMENTS="$manifest" PERSISTED_ONLY=true
PERSISTED_ONLY=true node src/matrix.mjs || failed=1
stop_server

if [ "$failed" -ne 0 ]; then
  echo "the client matrix failed (tables above)"
  exit 1
fi
log "passed in $((SECONDS - started)) s"
