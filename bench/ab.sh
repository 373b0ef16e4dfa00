#!/usr/bin/env bash
# Two builds of the server side by side, for a before/after of one change:
#
#   bash bench/ab.sh -a DIR [-b DIR] [-d SECS] [-r ROUNDS] [-w 1,2,3,4,5]     (from the project root)
#
# Builds ./cmd/server of checkout A (-a, say a `git worktree` of the commit before) and of B (-b,
# default this checkout), copies the shared 200,000-order dataset into one fresh product database
# as compare.sh does (load-product.sql, then this checkout's bench/after-load.sql), and starts both
# servers on it, each pinned to CPU 1 with one Go thread as compare.sh runs the product. wrk (on
# CPU 0, 16 connections) then drives workloads W1-W5 of ../shared/bench over REST and GraphQL,
# alternating A and B cell by cell (ABBA across rounds) after a warm-up, and the script prints,
# per cell, each side's median req/s and p99, B/A, every round's req/s, and each side's median
# server CPU time per request (user + system, from /proc). On this machine one side's rate moves
# by a third between rounds with the machine's other load; alternating cells put both sides under
# the same load, so B/A is steadier than two compare.sh runs, and a change shows as B above A in
# every round. The CPU a request costs moves less than the rate; it is the figure for changes of
# a few percent. Server extras: AB_ENV_A / AB_ENV_B (e.g. "ACTIVE_REQUESTS=4").
# Both serve one database, which each migrates as it starts (A first, then B): for changes that
# leave the schema alone; a schema change needs a run of scale.sh or compare.sh per side.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd ../shared/bench 2>/dev/null && pwd) || { echo "bench: ../shared/bench not found"; exit 2; }
A="" B=$(pwd) DUR=4 ROUNDS=3 WLS=1,2,3,4,5
while [ $# -gt 0 ]; do
  case "$1" in -a) A=$(cd "$2" && pwd); shift 2;; -b) B=$(cd "$2" && pwd); shift 2;; -d) DUR=$2; shift 2;;
    -r) ROUNDS=$2; shift 2;; -w) WLS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
[ -n "$A" ] || { echo "usage: bash bench/ab.sh -a DIR [-b DIR] [-d SECS] [-r ROUNDS] [-w 1,2,3,4,5]"; exit 2; }
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
work=$(mktemp -d) DB=bench_ab_$$ pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
sql() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset"; (cd "$shared" && sql -d bench -f dataset.sql >/dev/null)
fi
(cd "$A" && go build -o "$work/server-a" ./cmd/server)
(cd "$B" && go build -o "$work/server-b" ./cmd/server)
sql -d postgres -c "CREATE DATABASE $DB"
URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
(cd "$work" && ./server-b migrate --database-url "$URL" >/dev/null)
sql -d "$DB" -v src="'dbname=bench user=postgres host=127.0.0.1'" -f "$shared/load-product.sql" >/dev/null 2>&1
sql -d "$DB" -f bench/after-load.sql >/dev/null
TOKEN=$(cd "$work" && ./server-b token create --configurator 1 --database-url "$URL" 2>/dev/null | tail -n1)
start() { # side port
  local extra=AB_ENV_${1^^}
  (cd "$work" && exec env ${!extra:-} GOMAXPROCS=1 DEMO=false taskset -c 1 "./server-$1" serve --addr "127.0.0.1:$2" \
    --database-url "$URL" --public-url "http://127.0.0.1:$2" >"$work/$1.log" 2>&1) & pids+=($!)
}
ready() { for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$1/readyz" && return; sleep 0.3; done; echo "server on $1 not ready"; exit 1; }
start a 5291; ready 5291; pid_a=$!
start b 5292; ready 5292; pid_b=$!
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # the server's CPU time so far (user + system), in clock ticks
source bench/paths.sh
run() { # port transport wl secs -> RESULT json
  if [ "$2" = gql ]; then
    BENCH_WL=$3 BENCH_GQL_FILE="$shared/workloads/gql/w$3.graphql" BENCH_AUTH="$TOKEN" \
      taskset -c 0 wrk -t1 -c16 -d"$4s" --timeout 5s -s "$shared/workloads/wrk.lua" "http://127.0.0.1:$1"
  else
    BENCH_WL=$3 BENCH_TEMPLATE="$(rest_path "$3")" BENCH_AUTH="$TOKEN" \
      taskset -c 0 wrk -t1 -c16 -d"$4s" --timeout 5s -s "$shared/workloads/wrk.lua" "http://127.0.0.1:$1"
  fi 2>&1 | sed -n 's/^RESULT //p'
}
for wl in ${WLS//,/ }; do for t in rest gql; do run 5291 $t "$wl" 2 >/dev/null; run 5292 $t "$wl" 2 >/dev/null; done; done
: >"$work/results"
for r in $(seq "$ROUNDS"); do for wl in ${WLS//,/ }; do for t in rest gql; do
  sides="a b"; [ $((r % 2)) = 0 ] && sides="b a"
  for s in $sides; do
    port=5291 pid=$pid_a; [ "$s" = b ] && port=5292 pid=$pid_b
    c0=$(ticks $pid); res=$(run $port $t "$wl" "$DUR"); c1=$(ticks $pid)
    echo "$s $t $wl $((c1 - c0)) $res" >>"$work/results"
  done
done; done; done
echo "A = $A ($(git -C "$A" log --oneline -1 | cut -c1-60))"
echo "B = $B ($(git -C "$B" log --oneline -1 | cut -c1-60)$(git -C "$B" diff --quiet HEAD || echo ', with uncommitted changes'))"
python3 - "$work/results" "$(getconf CLK_TCK)" <<'PY'
import json, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    side, t, wl, ticks, js = line.split(" ", 4)
    if js.strip():
        r = json.loads(js)
        r["cpu_us"] = int(ticks) * 1e6 / int(sys.argv[2]) / max(r["requests"], 1)
        rows.setdefault((t, int(wl), side), []).append(r)
print("| cell | A req/s | A p99 ms | B req/s | B p99 ms | B/A | rounds A | rounds B | A / B server CPU us/req | CPU B/A | errors A/B |")
print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|")
for t, wl in sorted({(k[0], k[1]) for k in rows}):
    a, b = rows.get((t, wl, "a"), []), rows.get((t, wl, "b"), [])
    if not a or not b:
        continue
    ra, rb = st.median(x["rps"] for x in a), st.median(x["rps"] for x in b)
    pa, pb = st.median(x["p99_ms"] for x in a), st.median(x["p99_ms"] for x in b)
    err = lambda xs: sum(x["err_status"] + x["err_timeout"] + x["err_connect"] + x["err_read"] for x in xs)
    rounds = lambda xs: " / ".join(f"{x['rps']:,.0f}" for x in xs)
    ca, cb = st.median(x["cpu_us"] for x in a), st.median(x["cpu_us"] for x in b)
    print(f"| W{wl} {'GraphQL' if t == 'gql' else 'REST'} | {ra:,.0f} | {pa:.1f} | {rb:,.0f} | {pb:.1f} | {rb / ra:.2f} | {rounds(a)} | {rounds(b)} | {ca:.0f} / {cb:.0f} | {cb / ca:.2f} | {err(a)}/{err(b)} |")
PY
