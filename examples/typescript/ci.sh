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
root=$(cd ../.. && pwd)
started=$SECONDS

log() { printf '\n== example: %s\n' "$*"; }

work=$(mktemp -d)
pid=
stop_server() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
  fi
}
cleanup() {
  status=$?
  stop_server
  if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
    echo "-- the server's log (last 40 lines):"
    tail -n 40 "$work/server.log"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

db="sqlite://$work/configurator.db"

# get URL [FILE]: GET URL, fail unless 200, write the body to FILE if given.
get() {
  node -e '
    const [url, file] = process.argv.slice(1);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
    const body = Buffer.from(await res.arrayBuffer());
    if (file) (await import("node:fs")).writeFileSync(file, body);
  ' --input-type=module "$@"
}

# start_server starts the binary on a port the kernel picks, with the
# environment given as arguments, and sets API_URL once it answers.
start_server() {
  : >"$work/server.log"
  env "$@" "$work/server" serve --addr 127.0.0.1:0 --database-url "$db" \
    --storage-url "file://$work/uploads" --demo true >/dev/null 2>>"$work/server.log" &
  pid=$!
  local addr=
  for _ in $(seq 1 600); do
    addr=$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$work/server.log" | head -n 1)
    [ -n "$addr" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "the server exited before it listened"; exit 1; }
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "the server did not listen within a minute"; exit 1; }
  export API_URL="http://$addr"
  for _ in $(seq 1 100); do
    get "$API_URL/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the server at $API_URL was not ready within 10 s"
  exit 1
}

log "build and start the server (SQLite, demo data)"
(cd "$root" && go build -o "$work/server" ./cmd/server)
start_server
echo "listening at $API_URL"
TOKEN=$("$work/server" token create --configurator 1 --database-url "$db")
CODEGEN_TOKEN=$("$work/server" token create --dashboard --owner 1 --database-url "$db")
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
