#!/usr/bin/env bash
# The same cost at ten times the data, and order writes that scale with clients (issue 27).
#
#   bash bench/scale.sh [-n ORDERS] [-d SECS] [-r ROUNDS] [-s SECS] [-src DIR]     (from the project root)
#
# Builds the reference dataset at ORDERS orders (default 2,000,000; ../shared/bench/dataset.sql
# -v orders=N) in database scale_ref_N, copies it into a fresh product database as compare.sh
# does (load-product.sql, then the checkout's bench/after-load.sql), starts the server (one Go
# thread pinned to CPU 1, as compare.sh runs it; no rate limit) and runs bench/scaleload on CPU 0:
# with one client, taking turns (200 of each), the median and p90 of page 1, the middle page and the last page of every
# order (REST, 20 a page, newest first), W3 and an order by id; order creation over GraphQL with
# one client, then 8 clients on one configurator and 8 spread over eight in alternating rounds
# of -d seconds (-r rounds, after an untimed half-round of each), each with the share of
# pg_stat_activity samples (every 50 ms) in which a backend of the product's database waits on
# a heavyweight lock, and the CPU time an order of each shape cost; then -s seconds
# (default 90) of sustained load on one configurator, in 10 s windows, with the CPU time an order
# cost in each (the server's and its database backends'), which the machine's other load changes
# less than the rate.
# -src DIR builds the server (and takes bench/after-load.sql) from another checkout, for a
# before/after comparison; the load program is always this checkout's. The product database is
# dropped at the end, the reference one too unless KEEP_REF=1 (it takes minutes to build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/.." && pwd)
shared=$project/../shared/bench
ORDERS=2000000 DUR=10 ROUNDS=2 SUST=90 SRC=$project
while [ $# -gt 0 ]; do
  case "$1" in -n) ORDERS=$2; shift 2;; -d) DUR=$2; shift 2;; -r) ROUNDS=$2; shift 2;; -s) SUST=$2; shift 2;;
    -src) SRC=$(cd "$2" && pwd); shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
REF=scale_ref_$ORDERS PDB=scale_prod_$$
work=$(mktemp -d); pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $PDB WITH (FORCE)" >/dev/null 2>&1 || true
  [ "${KEEP_REF:-}" = 1 ] || psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $REF WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
sql() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$REF'")" = 1 ] || sql -d postgres -c "CREATE DATABASE $REF"
if [ "$(sql -d "$REF" -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != "$ORDERS" ]; then
  echo "building the reference dataset at $ORDERS orders (about 100 s a million on a quiet machine)"
  (cd "$shared" && sql -d "$REF" -v orders="$ORDERS" -f dataset.sql >/dev/null)
fi
sql -d postgres -c "CREATE DATABASE $PDB"
url="postgres://postgres@127.0.0.1:5432/$PDB?sslmode=disable"
(cd "$SRC" && go build -o "$work/server" ./cmd/server)
go build -o "$work/load" ./bench/scaleload
(cd "$work" && ./server migrate --database-url "$url" >/dev/null)
echo "copying it into the product ($(git -C "$SRC" log -1 --format='%h %s' | cut -c1-70))"
sql -d "$PDB" -v src="'dbname=$REF user=postgres host=127.0.0.1'" -f "$shared/load-product.sql" >/dev/null
[ -f "$SRC/bench/after-load.sql" ] && sql -d "$PDB" -f "$SRC/bench/after-load.sql" >/dev/null
TOKEN=$(cd "$work" && ./server token create --configurator 1 --database-url "$url" 2>/dev/null | tail -n1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work" && GOMAXPROCS=1 DEMO=false RATE_LIMIT_PER_MINUTE=0 exec taskset -c 1 ./server serve --addr 127.0.0.1:$port \
  --database-url "$url" --public-url http://127.0.0.1:$port >"$work/server.log" 2>&1) & pids+=($!)
server_pid=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.3; done
taskset -c 0 "$work/load" -base "http://127.0.0.1:$port" -token "$TOKEN" -db "$url" -d "${DUR}s" -r "$ROUNDS" -sustained "${SUST}s" -server-pid "$server_pid"
