#!/usr/bin/env bash
# The federation check, as CI runs it (.ci/run calls it): this service as a
# subgraph beside the reviews subgraph (src/reviews.mjs). It builds and
# starts the server, composes its SDL (served, and checked in) with the
# reviews subgraph and proves the check catches a removed key
# (src/compose.mjs), starts Hive Gateway over the supergraph, and runs the
# Apollo Client 4 cases through it (src/cases.mjs); then it restarts the
# server with PERSISTED_ONLY=true and the documents the gateway sent as its
# manifest, and runs them again. Fails on any failed
# step or case. Needs go, node (20.19 or later) and npm.
set -euo pipefail
cd "$(dirname "$0")"
started=$SECONDS

log() { printf '\n== federation: %s\n' "$*"; }

# work, db, server, get, build_server, start_server, stop_server.
source ../server.sh

# The gateway and the reviews subgraph stop with the server (server.sh's
# cleanup, on exit).
gateway_pid= reviews_pid=
eval "server_$(declare -f stop_server)"
stop_server() {
  for p in $gateway_pid $reviews_pid; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  gateway_pid= reviews_pid=
  server_stop_server
}

# wait_line FILE PATTERN: wait up to a minute for a line of FILE matching PATTERN.
wait_line() {
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "no \"$2\" in $1 within a minute:"; tail -n 20 "$1"; exit 1
}

log "npm ci"
npm ci --no-audit --no-fund --loglevel=error

log "build and start the server (SQLite, demo data)"
build_server
start_server
TOKEN1=$("$server" token create --configurator 1 --database-url "$db" 2>/dev/null)
TOKEN2=$("$server" token create --configurator 3 --database-url "$db" 2>/dev/null)
export TOKEN1 TOKEN2

log "start the reviews subgraph"
node src/reviews.mjs 0 >"$work/reviews.log" 2>&1 &
reviews_pid=$!
wait_line "$work/reviews.log" '^listening '
export REVIEWS_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$work/reviews.log")/graphql"

log "composition check"
export SUPERGRAPH="$work/supergraph.graphql"
TOKEN="$TOKEN1" node src/compose.mjs "$SUPERGRAPH"

log "start Hive Gateway"
GATEWAY_PORT=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export GATEWAY_PORT
# The documents the gateway sends to this service are recorded as a
# manifest (gateway.config.mjs), for the trusted-documents run below.
export RECORD_DOCUMENTS="$work/gateway-documents.json"
node_modules/.bin/hive-gateway supergraph "$SUPERGRAPH" >"$work/gateway.log" 2>&1 &
gateway_pid=$!
export GATEWAY_URL="http://127.0.0.1:$GATEWAY_PORT/graphql"
for _ in $(seq 1 600); do
  get "http://127.0.0.1:$GATEWAY_PORT/healthcheck" 2>/dev/null && break
  kill -0 "$gateway_pid" 2>/dev/null || { echo "the gateway exited:"; tail -n 40 "$work/gateway.log"; exit 1; }
  sleep 0.1
done

log "Apollo Client 4 through the gateway"
node src/cases.mjs || { echo "-- the gateway's log (last 40 lines):"; tail -n 40 "$work/gateway.log"; exit 1; }

# Trusted documents apply to the gateway's documents like any other
# (docs/federation.md): this service restarted, at the same address, with
# PERSISTED_ONLY=true and the documents the gateway sent above as its
# manifest, answers the same cases through the gateway (those that send no
# document of their own to it directly).
log "through the gateway with PERSISTED_ONLY=true and the gateway's recorded documents"
node -e 'const m=require(process.argv[1]); console.log(Object.keys(m).length + " documents recorded"); if (!Object.keys(m).length) process.exit(1)' "$RECORD_DOCUMENTS"
cp "$RECORD_DOCUMENTS" "$work/trusted.json"
server_stop_server
SERVER_ADDR=${API_URL#http://} start_server PERSISTED_DOCUMENTS="$work/trusted.json" PERSISTED_ONLY=true
ONLY='both subgraphs|tenancy holds|error codes|subscription through|@defer: the configurator first' node src/cases.mjs ||
  { echo "-- the gateway's log (last 40 lines):"; tail -n 40 "$work/gateway.log"; exit 1; }

log "passed in $((SECONDS - started)) s"
