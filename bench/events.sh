#!/usr/bin/env bash
# What events cost (issue 18): order creation throughput over GraphQL with
# no webhook endpoint and with one active endpoint, alternating A B B A (the
# tables grow, which slows creation down), and the
# delivery lag p50/p99 to a receiver on loopback (bench/eventsload). One
# replica on PostgreSQL (a fresh database, the demo data), pinned to CPU 1
# with one Go thread as compare.sh runs it; the driver and its receiver on
# CPU 0.
#
#   bash bench/events.sh [-d SECS] [-r ROUNDS] [-c CONNS]     (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=10 ROUNDS=2 CONNS=8
while [ $# -gt 0 ]; do
  case "$1" in -d) DUR=$2; shift 2;; -r) ROUNDS=$2; shift 2;; -c) CONNS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
work=$(mktemp -d); pids=(); DB=bench_events_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "CREATE DATABASE $DB" >/dev/null
url="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
go build -o "$work/server" ./cmd/server
go build -o "$work/load" ./bench/eventsload
"$work/server" seed --demo --database-url "$url" >/dev/null 2>&1
open=$("$work/server" token create --configurator 1 --database-url "$url" 2>/dev/null)
dash=$("$work/server" token create --dashboard --owner 1 --database-url "$url" 2>/dev/null)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DATABASE_URL=$url ADDR=127.0.0.1:$port PPROF_ADDR=${PPROF_ADDR:-} DEMO=false WEBHOOK_ALLOW_PRIVATE=true RATE_LIMIT_PER_MINUTE=0 \
  GOMAXPROCS=1 taskset -c 1 "$work/server" serve >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
taskset -c 0 "$work/load" -base "http://127.0.0.1:$port" -token "$open" -dashboard "$dash" -d "${DUR}s" -r "$ROUNDS" -c "$CONNS"
