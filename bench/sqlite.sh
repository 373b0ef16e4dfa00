#!/usr/bin/env bash
# The workloads of ../shared/bench on the embedded SQLite default: the same
# 200,000-order dataset, copied from PostgreSQL into a SQLite file migrated
# by the product (bench/sqliteload), served pinned to CPU 1 with one Go
# thread and driven by wrk on CPU 0 as compare.sh does. There is no limit
# proxy for SQLite, so it prints req/s, p50 and p99 per cell.
#
#   bash bench/sqlite.sh [-d SECS] [-r ROUNDS] [-w 1,2,3,4,5]     (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(cd ../shared/bench && pwd)
DUR=5 ROUNDS=2 WLS=1,2,3,4,5
while [ $# -gt 0 ]; do
  case "$1" in -d) DUR=$2; shift 2;; -r) ROUNDS=$2; shift 2;; -w) WLS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
work=$(mktemp -d); pids=(); SRC=bench_sqlite_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $SRC WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
sql() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset (about 10 s)"; (cd "$here" && sql -d bench -f dataset.sql >/dev/null)
fi
go build -o "$work/server" ./cmd/server
sql -d postgres -c "CREATE DATABASE $SRC"
PG="postgres://postgres@127.0.0.1:5432/$SRC?sslmode=disable"
"$work/server" migrate --database-url "$PG" >/dev/null 2>&1
sql -d "$SRC" -v src="'dbname=bench user=postgres host=127.0.0.1'" -f "$here/load-product.sql" >/dev/null
sql -d "$SRC" -f bench/after-load.sql >/dev/null
DB="sqlite://$work/bench.db"
"$work/server" migrate --database-url "$DB" >/dev/null 2>&1
echo "copying the dataset into SQLite"
go run ./bench/sqliteload -from "$PG" -to "$DB"
TOKEN=$("$work/server" token create --configurator 1 --database-url "$DB" 2>/dev/null | tail -n1)
PORT=5193
(cd "$work" && GOMAXPROCS=1 DEMO=false exec taskset -c 1 ./server serve --addr 127.0.0.1:$PORT --database-url "$DB" --public-url http://127.0.0.1:$PORT >"$work/product.log" 2>&1) & pids+=($!)
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.3; done
source bench/paths.sh
run() {
  local t=$1 wl=$2 secs=$3
  if [ "$t" = rest ]; then
    BENCH_WL=$wl BENCH_TEMPLATE="$(rest_path "$wl")" BENCH_AUTH="$TOKEN" taskset -c 0 wrk -t1 -c16 -d"${secs}s" --timeout 5s -s "$here/workloads/wrk.lua" "http://127.0.0.1:$PORT"
  else
    BENCH_WL=$wl BENCH_GQL_FILE="$here/workloads/gql/w$wl.graphql" BENCH_AUTH="$TOKEN" taskset -c 0 wrk -t1 -c16 -d"${secs}s" --timeout 5s -s "$here/workloads/wrk.lua" "http://127.0.0.1:$PORT"
  fi 2>&1 | sed -n 's/^RESULT //p'
}
for wl in ${WLS//,/ }; do for t in rest gql; do run $t "$wl" 2 >/dev/null; done; done
: >"$work/results"
for r in $(seq "$ROUNDS"); do for wl in ${WLS//,/ }; do for t in rest gql; do
  echo "$t $wl $(run $t "$wl" "$DUR")" >>"$work/results"
done; done; done
rss=$(awk '/VmHWM/ {print int($2/1024)}' /proc/"$(pgrep -f "server serve --addr 127.0.0.1:$PORT" | head -n1)"/status 2>/dev/null || echo "?")
python3 - "$work/results" "$rss" <<'PY'
import json, sys, statistics
rows = {}
for line in open(sys.argv[1]):
    t, wl, js = line.split(" ", 2)
    if js.strip():
        rows.setdefault((t, int(wl)), []).append(json.loads(js))
names = {1: "W1 50 materials of a category", 2: "W2 material by id", 3: "W3 orders filtered + total", 4: "W4 orders page p + total", 5: "W5 option + variations"}
print("| workload | target | req/s (median) | p50 ms | p99 ms | errors |")
print("|---|---|---:|---:|---:|---:|")
for (t, wl), rs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0] != "rest")):
    errs = sum(r["err_status"] + r["err_timeout"] + r["err_connect"] + r["err_read"] for r in rs)
    print(f"| {names[wl]} | {t} (sqlite) | {statistics.median(r['rps'] for r in rs):,.0f} | {statistics.median(r['p50_ms'] for r in rs):.2f} | {statistics.median(r['p99_ms'] for r in rs):.2f} | {errs} |")
print(f"product peak RSS: {sys.argv[2]} MB")
PY
