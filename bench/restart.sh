#!/usr/bin/env bash
# What a PostgreSQL restart costs the clients (issue 42, item 5;
# docs/operations.md, *A PostgreSQL restart*). It starts a throwaway
# PostgreSQL of its own (initdb + pg_ctl on a free port, the binaries of
# `pg_config --bindir`, run as the postgres OS user when root; the shared
# server at 5432 is never touched), the service on it (the demo data, a
# webhook endpoint on loopback), and bench/restartload: REST reads, REST and
# GraphQL order creations with an Idempotency-Key (retried with the same
# key after an error) and GraphQL queries, while `pg_ctl restart -m fast`
# restarts PostgreSQL. It prints how long PostgreSQL refused connections,
# how long clients got errors and which, how long after PostgreSQL's
# return the service answered 2xx again, and whether every created order's
# webhook arrived; exit status 1 on a 500, a 503 without Retry-After, a
# transport error or a lost webhook.
#
#   bash bench/restart.sh [-r ROUNDS] [-c CLIENTS] [-before SECS] [-after SECS]   (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=3 CLIENTS=8 BEFORE=5 AFTER=10
while [ $# -gt 0 ]; do
  case "$1" in -r) ROUNDS=$2; shift 2;; -c) CLIENTS=$2; shift 2;; -before) BEFORE=$2; shift 2;; -after) AFTER=$2; shift 2;;
    *) echo "unknown option $1"; exit 2;; esac
done
bin=$(pg_config --bindir)
work=$(mktemp -d); pids=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$work"
pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  as_pg "$bin/pg_ctl" stop -m immediate -D "$work/data" >/dev/null 2>&1 || true
  # KEEP_LOG=FILE keeps the server's log (for a failure to read).
  if [ -n "${KEEP_LOG:-}" ]; then cp "$work/server.log" "$KEEP_LOG" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
as_pg "$bin/initdb" -D "$work/data" -U postgres -A trust -E UTF8 --no-instructions >/dev/null
# As a production server: fsync on, the defaults but the port and socket.
opts="-c port=$pgport -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work"
as_pg "$bin/pg_ctl" start -w -D "$work/data" -l "$work/pg.log" -o "$opts" >/dev/null
url="postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable"
go build -o "$work/server" ./cmd/server
go build -o "$work/load" ./bench/restartload
"$work/server" migrate --database-url "$url" >/dev/null
"$work/server" seed --demo --database-url "$url" >/dev/null
open=$("$work/server" token create --configurator 1 --database-url "$url" 2>/dev/null | tail -n1)
dash=$("$work/server" token create --dashboard --owner 1 --database-url "$url" 2>/dev/null | tail -n1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DATABASE_URL=$url ADDR=127.0.0.1:$port DEMO=false WEBHOOK_ALLOW_PRIVATE=true RATE_LIMIT_PER_MINUTE=0 \
  WEBHOOK_RETRY_SCHEDULE=${WEBHOOK_RETRY_SCHEDULE:-1s,2s,5s} "$work/server" serve >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
restart="$( [ "$(id -u)" = 0 ] && echo 'runuser -u postgres -- ')$bin/pg_ctl restart -w -m fast -D $work/data -l $work/pg.log -o '$opts'"
status=0
for r in $(seq "$ROUNDS"); do
  echo "## round $r (machine load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$work/load" -base "http://127.0.0.1:$port" -token "$open" -dashboard "$dash" -db "$url" -restart "$restart" \
    -c "$CLIENTS" -before "${BEFORE}s" -after "${AFTER}s" || status=1
done
echo "server log: $(grep -c 'level=ERROR' "$work/server.log" || true) ERROR lines, $(grep -c 'level=WARN' "$work/server.log" || true) WARN lines"
grep -E 'level=(ERROR|WARN)' "$work/server.log" | sed -E 's/^time=[^ ]+ //' | cut -c1-200 | sort | uniq -c | sort -rn | head -8 || true
exit $status
