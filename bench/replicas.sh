#!/usr/bin/env bash
# Throughput with 1, 2 and 3 replicas behind HAProxy, on the shared
# 200,000-order dataset of ../shared/bench (loaded as compare.sh loads it:
# load-product.sql, then bench/after-load.sql, a token from `server token
# create`). The balancer runs docs/haproxy.cfg, the deployment guide's
# configuration, with only its addresses replaced (as TestReplicas does);
# the replicas share the database, a Redis (rate limits, REDIS_URL) that the
# script starts, and each runs with GOMAXPROCS=1, as a replica given one CPU
# would. wrk drives workloads W2 (a material by id) and W3 (20 orders of a
# configurator in a date range, with the total) of ../shared/bench over REST
# and GraphQL, a short bounded time per cell, and the script prints req/s
# per replica count, with the CPU each part used (in cores: 1.00 is one
# core busy) to show what limited it. Two rows measure one replica without
# the balancer, with the Redis limiter and with the in-memory one.
#
#   bash bench/replicas.sh [-d SECS] [-n 1,2,3] [-c CONNS]     (from the project root)
#
# Not part of the test suite: it takes a few minutes and its figures depend
# on the machine (ratios between rows of one run are what it shows).
set -euo pipefail
cd "$(dirname "$0")/.."
project=$(pwd)
here=$(cd ../shared/bench && pwd)
DUR=5 COUNTS=1,2,3 CONNS=32
while [ $# -gt 0 ]; do
  case "$1" in -d) DUR=$2; shift 2;; -n) COUNTS=$2; shift 2;; -c) CONNS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
work=$(mktemp -d); pids=(); DB=bench_replicas_$$
# Free loopback ports: the balancer's, Redis's and three replicas'.
read -r LB REDIS P1 P2 P3 < <(python3 -c 'import socket
ss = [socket.socket() for _ in range(5)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
PORTS=($P1 $P2 $P3)
stop_all() {
  local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done; pids=()
}
cleanup() {
  stop_all; [ -n "${redis_pid:-}" ] && { kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; }; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
need=()
for tool in wrk haproxy redis-server; do command -v $tool >/dev/null || need+=($tool); done
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
sql() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset (about 10 s)"; (cd "$here" && sql -d bench -f dataset.sql >/dev/null)
fi
sql -d postgres -c "CREATE DATABASE $DB"
PDB="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
go build -o "$work/server" ./cmd/server
(cd "$work" && ./server migrate --database-url "$PDB" >/dev/null)
sql -d "$DB" -v src="'dbname=bench user=postgres host=127.0.0.1'" -f "$here/load-product.sql" >/dev/null
sql -d "$DB" -f "$project/bench/after-load.sql" >/dev/null
TOKEN=$(cd "$work" && ./server token create --configurator 1 --database-url "$PDB" 2>/dev/null | tail -n1)
redis-server --port $REDIS --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --daemonize no --loglevel warning >"$work/redis.log" 2>&1 &
redis_pid=$!

# start N MODE: N replicas (MODE redis or memory), behind the balancer
# unless MODE ends in -direct; sets BASE.
start() {
  local n=$1 mode=$2 i
  stop_all
  for ((i = 0; i < n; i++)); do
    local redis_env=(REDIS_URL=redis://127.0.0.1:$REDIS)
    [ "${mode%-direct}" = memory ] && redis_env=()
    (cd "$work" && exec env GOMAXPROCS=1 DEMO=false "${redis_env[@]}" ./server serve --addr 127.0.0.1:${PORTS[$i]} \
      --database-url "$PDB" --public-url http://127.0.0.1:$LB >"$work/replica$i.log" 2>&1) &
    pids+=($!)
  done
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:${PORTS[$i]}/readyz" && break; sleep 0.2; done
  done
  if [[ $mode == *-direct ]]; then BASE=http://127.0.0.1:${PORTS[0]}; return; fi
  # The guide's configuration, with this machine's addresses.
  awk -v lb="127.0.0.1:$LB" -v n="$n" -v ports="${PORTS[*]}" '
    BEGIN { split(ports, p, " ") }
    $1 == "bind" { print "    bind " lb; next }
    $1 == "server" { if (!done) { for (i = 1; i <= n; i++) { opts = ""; for (j = 4; j <= NF; j++) opts = opts " " $j
                       print "    server replica" i " 127.0.0.1:" p[i] opts }; done = 1 }; next }
    { print }' docs/haproxy.cfg >"$work/haproxy.cfg"
  haproxy -db -f "$work/haproxy.cfg" >/dev/null 2>"$work/haproxy.log" &
  pids+=($!)
  BASE=http://127.0.0.1:$LB
  for _ in $(seq 100); do curl -fs -o /dev/null "$BASE/healthz" && break; sleep 0.1; done
}

L=/api/open-api/v1
rest_path() { case $1 in
  2) echo "$L/materials/{id}";;
  3) echo "$L/orders?per_page=20&page=1&configurator_id={c}&start_date=2024-03-01&end_date=2024-06-01&order_by=created_at&order=desc";; esac; }
# run TARGET WL SECS: wrk's RESULT line (json)
run() {
  local t=$1 wl=$2 secs=$3
  case $t in
    rest) BENCH_WL=$wl BENCH_TEMPLATE="$(rest_path "$wl")" BENCH_AUTH="$TOKEN" wrk -t1 -c"$CONNS" -d"${secs}s" --timeout 5s -s "$here/workloads/wrk.lua" "$BASE";;
    gql) BENCH_WL=$wl BENCH_GQL_FILE="$here/workloads/gql/w$wl.graphql" BENCH_AUTH="$TOKEN" wrk -t1 -c"$CONNS" -d"${secs}s" --timeout 5s -s "$here/workloads/wrk.lua" "$BASE";;
  esac 2>&1 | sed -n 's/^RESULT //p'
}
# What a cell's CPU went to: snap FILE GROUP=PID,PID... records each
# process's CPU ticks and the machine's busy ticks; cores START END prints
# each group's share in cores (1.00: one core busy the whole cell).
cat >"$work/cpu.py" <<'PY'
import json, os, sys, time
def ticks(pid):
    try:
        s = open(f"/proc/{pid}/stat").read()
        f = s[s.rindex(")") + 2:].split()
        return int(f[11]) + int(f[12])  # utime + stime
    except (OSError, ValueError):
        return None
def busy():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return sum(v) - v[3] - v[4]  # less idle and iowait
if sys.argv[1] == "snap":
    groups = {}
    for g in sys.argv[3:]:
        name, pids = g.split("=", 1)
        groups[name] = {p: ticks(p) for p in pids.split(",") if p}
    json.dump({"t": time.time(), "busy": busy(), "groups": groups}, open(sys.argv[2], "w"))
else:
    a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
    hz, w = os.sysconf("SC_CLK_TCK"), b["t"] - a["t"]
    out = {}
    for name, pids in b["groups"].items():
        # A process gone by the end is lost; one new since the start
        # counts its whole (short) life.
        out[name] = sum(t - (a["groups"][name].get(p) or 0) for p, t in pids.items() if t is not None) / hz / w
    out["machine"] = (b["busy"] - a["busy"]) / hz / w
    print(" ".join(f"{k}={v:.2f}" for k, v in out.items()))
PY
# The PostgreSQL backends of the product's database.
pg_pids() { sql -d postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = '$DB'" | paste -sd,; }
snap() {
  local file=$1 lbp=""
  [[ $mode != *-direct ]] && lbp=${pids[$n]}
  python3 "$work/cpu.py" snap "$file" "replicas=$(IFS=,; echo "${pids[*]:0:$n}")" "haproxy=$lbp" "redis=$redis_pid" "postgres=$(pg_pids)"
}

: >"$work/results"
configs=("1 redis-direct" "1 memory-direct")
for n in ${COUNTS//,/ }; do configs+=("$n redis"); done
for cfg in "${configs[@]}"; do
  read -r n mode <<<"$cfg"
  start "$n" "$mode"
  for wl in 2 3; do for t in rest gql; do
    run $t $wl 2 >/dev/null # warm up: connections, caches, plans
    snap "$work/cpu0"
    res=$(run $t $wl "$DUR")
    snap "$work/cpu1"
    echo "$n|$mode|$t|$wl|$res|$(python3 "$work/cpu.py" cores "$work/cpu0" "$work/cpu1")" >>"$work/results"
    echo "  $n $mode W$wl $t: $(echo "$res" | sed 's/.*"rps":\([0-9.]*\).*/\1/') req/s" >&2
  done; done
done
stop_all

python3 - "$work/results" "$DUR" "$CONNS" "$(nproc)" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    n, mode, t, wl, js, cpu = line.rstrip("\n").split("|")
    if not js.strip():
        continue
    r = json.loads(js)
    c = {k: float(v) for k, v in (kv.split("=") for kv in cpu.split())}
    c["rest"] = c["machine"] - c["replicas"] - c["haproxy"] - c["redis"] - c["postgres"]
    errs = r["err_status"] + r["err_timeout"] + r["err_connect"] + r["err_read"]
    rows.append((n, mode, t, int(wl), r, errs, c))
name = {"redis-direct": "alone, Redis limiter", "memory-direct": "alone, in-memory limiter", "redis": "HAProxy, Redis limiter"}
print(f"wrk: 1 thread, {sys.argv[3]} connections, {sys.argv[2]} s a cell; each replica GOMAXPROCS=1; {sys.argv[4]} CPUs.")
print("CPU in cores: the replicas, haproxy, redis-server, the database's backends, everything else (wrk and the")
print("machine's other processes), and the machine's total.")
print()
print("| replicas | setup | workload | req/s | p50 ms | p99 ms | errors | CPU replicas | haproxy | redis | postgres | rest | machine |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n, mode, t, wl, r, errs, c in rows:
    wname = {2: "W2", 3: "W3"}[wl] + (" REST" if t == "rest" else " GraphQL")
    print(f"| {n} | {name[mode]} | {wname} | {r['rps']:,.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {errs} | "
          f"{c['replicas']:.2f} | {c['haproxy']:.2f} | {c['redis']:.2f} | {c['postgres']:.2f} | {c['rest']:.2f} | {c['machine']:.2f} |")
PY
