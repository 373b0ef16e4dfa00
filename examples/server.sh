# The examples' server, for their ci.sh scripts (examples/typescript,
# examples/clients), which source this file after `set -euo pipefail`:
# a scratch directory (removed on exit, with the server stopped and the
# tail of its log printed when the script fails), the binary built from
# this checkout, and a server on a free port with the SQLite demo data.
# Needs go and node (not curl: node fetches).
#
# Sets: root (the repository), work (the scratch directory), db (the
# SQLite URL), server (the binary, once build_server ran) and, while a
# server runs, pid and API_URL. Extra environment for the server, such as
# PERSISTED_DOCUMENTS, goes as arguments to start_server; JWT_SECRET, when
# exported, reaches the server and the CLI alike. SERVER_ADDR, when set, is the
# address the server listens on (default: a port the kernel picks), for a
# restart that others know the address of.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
db="sqlite://$work/configurator.db"
server="$work/server"
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

# build_server builds the binary of this checkout into $server.
build_server() {
  (cd "$root" && go build -o "$server" ./cmd/server)
}

# start_server starts the binary on a port the kernel picks, with the
# environment given as arguments, and sets API_URL once it answers.
start_server() {
  : >"$work/server.log"
  env "$@" "$server" serve --addr "${SERVER_ADDR:-127.0.0.1:0}" --database-url "$db" \
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
