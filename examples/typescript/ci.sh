#!/usr/bin/env bash
# Runs the TypeScript example against a freshly built server, as CI does
# (.ci/run calls it): builds the binary, starts it on a free port with the
# SQLite demo data, makes an Open API and a dashboard token, installs the
# locked packages, generates the clients from the running server, type
# checks them with tsc --strict, lints the served OpenAPI document with
# redocly and Spectral (any error or warning fails), restarts the server
# with the emitted persisted-documents manifest and runs the example.
# Needs go, node (20.19 or later) and npm (not curl: node fetches).
set -euo pipefail
cd "$(dirname "$0")"
started=$SECONDS

log() { printf '\n== example: %s\n' "$*"; }

# work, db, server, get, build_server, start_server, stop_server.
source ../server.sh

log "build and start the server (SQLite, demo data)"
build_server
start_server
echo "listening at $API_URL"
TOKEN=$("$server" token create --configurator 1 --database-url "$db")
CODEGEN_TOKEN=$("$server" token create --dashboard --owner 1 --database-url "$db")
export TOKEN CODEGEN_TOKEN

log "npm ci"
npm ci --no-audit --no-fund

log "codegen (REST and GraphQL, from the running server)"
npm run --silent codegen:rest
npm run --silent codegen:graphql -- --silent
manifest="$PWD/src/generated/graphql/persisted-documents.json"
node -e 'const m = require(process.argv[1]); const n = Object.keys(m).length; if (n === 0) process.exit(1); console.log(`persisted-documents.json: ${n} documents`);' "$manifest"

log "tsc --strict --noEmit"
npx tsc --strict --noEmit
echo "no error"

log "lint the served OpenAPI document"
# No usage report to Redocly, and no check for a newer release.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
get "$API_URL/api/open-api/v1/openapi.json" src/generated/openapi.json
npx redocly lint src/generated/openapi.json --config redocly.yaml --format stylish
npx spectral lint src/generated/openapi.json --ruleset .spectral.yaml --fail-severity=warn

log "run the example (server restarted with PERSISTED_DOCUMENTS and PERSISTED_ONLY)"
# Trusted documents only: the script's Open API token may run nothing but
# the manifest's documents, and every one must be known by its hash.
stop_server
start_server PERSISTED_DOCUMENTS="$manifest" PERSISTED_ONLY=true
EXPECT_TRUSTED=1 npm start --silent

stop_server
log "passed in $((SECONDS - started)) s"
