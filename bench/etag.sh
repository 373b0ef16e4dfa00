#!/usr/bin/env bash
# What HTTP caching costs and saves (issue 19): W1 (50 materials of a
# category) and W2 (a material by id) over REST and over GraphQL sent with
# GET, on the shared 200,000-order dataset, in three setups:
#
#   A 200   the binary before HTTP caching (BASE, no ETag), plain GETs
#   B 200   this checkout, plain GETs: the 200 path, with its ETag computed
#   B 304   this checkout, every GET with the If-None-Match of its answer
#
# A 200 vs B 200 is the cost of the ETag on the 200 path; B 304 what a
# revalidating client gets. Parameters are drawn as ../shared/bench draws them
# (category 1-50, id 1-5000); the paths and their ETags are fetched from B
# before the runs (bench/etag.lua sends them). Both servers run pinned to
# CPU 1 with one Go thread, wrk on CPU 0, as compare.sh runs them; rounds
# alternate A and B (A first in odd rounds, B first in even ones) and every
# round is printed (req/s, latency, and the server's CPU time per request,
# steadier than req/s on a shared machine), then the medians.
#
#   bash bench/etag.sh [-d SECS] [-r ROUNDS] [-b BASE] [-c CELLS]     (from the project root)
#
# CELLS is a comma-separated subset of w1-rest,w1-gql,w2-rest,w2-gql (all by
# default).
# BASE defaults to the parent of the commit that added internal/httpcache,
# built from `git archive`, so the script works from a clean checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(cd ../shared/bench && pwd)
DUR=5 ROUNDS=4 BASE= CELLS="w1-rest w1-gql w2-rest w2-gql"
while [ $# -gt 0 ]; do
  case "$1" in -d) DUR=$2; shift 2;; -r) ROUNDS=$2; shift 2;; -b) BASE=$2; shift 2;; -c) CELLS=${2//,/ }; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
if [ -z "$BASE" ]; then
  added=$(git log --diff-filter=A --format=%H -- internal/httpcache/httpcache.go | tail -n1)
  [ -n "$added" ] || { echo "bench: no commit adds internal/httpcache; name the base with -b"; exit 2; }
  BASE=$added^
fi
BASE=$(git rev-parse --short "$BASE")
work=$(mktemp -d); pids=(); PDBNAME=bench_etag_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $PDBNAME WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
sql() { PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset (about 10 s)"; (cd "$here" && sql -d bench -f dataset.sql >/dev/null)
fi

echo "building A ($BASE) and B (this checkout)"
mkdir "$work/base"
git archive "$BASE" | tar -x -C "$work/base"
(cd "$work/base" && go build -o "$work/server-a" ./cmd/server)
go build -o "$work/server-b" ./cmd/server

sql -d postgres -c "CREATE DATABASE $PDBNAME"
PDB="postgres://postgres@127.0.0.1:5432/$PDBNAME?sslmode=disable"
"$work/server-b" migrate --database-url "$PDB" >/dev/null 2>&1
sql -d "$PDBNAME" -v src="'dbname=bench user=postgres host=127.0.0.1'" -f "$here/load-product.sql" >/dev/null
sql -d "$PDBNAME" -f bench/after-load.sql >/dev/null
TOKEN=$("$work/server-b" token create --configurator 1 --database-url "$PDB" 2>/dev/null | tail -n1)

APORT=5194 BPORT=5195
declare -A spid
for v in a:$APORT b:$BPORT; do
  bin=${v%%:*} port=${v#*:}
  (cd "$work" && GOMAXPROCS=1 DEMO=false exec taskset -c 1 "./server-$bin" serve --addr 127.0.0.1:"$port" \
    --database-url "$PDB" --public-url http://127.0.0.1:"$port" >"$work/server-$bin.log" 2>&1) & pids+=($!)
  spid[$bin]=$! # the subshell execs taskset, which execs the server
done
for port in $APORT $BPORT; do
  for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.3; done
done

# The request paths of each cell with B's ETag of each; every one must
# answer 200 without GraphQL errors, and 304 to its ETag.
echo "fetching the ETags of every path"
python3 - "$work" "$BPORT" "$TOKEN" "$here/workloads/gql" <<'PY'
import http.client, json, sys, urllib.parse
work, port, token, gql = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
L = "/api/open-api/v1"
def graphql(wl, var, values):
    q = open(f"{gql}/w{wl}.graphql").read()
    return ["/graphql?" + urllib.parse.urlencode({"query": q, "variables": json.dumps({var: str(v)})}) for v in values]
cells = {
    "w1-rest": [f"{L}/materials?per_page=50&page=1&category_id={c}&order_by=created_at&order=desc" for c in range(1, 51)],
    "w2-rest": [f"{L}/materials/{i}" for i in range(1, 5001)],
    "w1-gql": graphql(1, "c", range(1, 51)),
    "w2-gql": graphql(2, "id", range(1, 5001)),
}
conn = http.client.HTTPConnection("127.0.0.1", port)
def get(path, inm=None):
    h = {"Authorization": "Bearer " + token}
    if inm:
        h["If-None-Match"] = inm
    conn.request("GET", path, headers=h)
    r = conn.getresponse()
    return r.status, r.getheader("ETag"), r.read()
for cell, paths in cells.items():
    with open(f"{work}/{cell}.paths", "w") as out:
        for p in paths:
            status, tag, body = get(p)
            if status != 200 or not tag or b'"errors"' in body:
                sys.exit(f"{cell}: GET {p} = {status}, ETag {tag}: {body[:300]!r}")
            out.write(f"{p}\t{tag}\n")
    status, _, body = get(paths[-1], tag)
    if status != 304 or body:
        sys.exit(f"{cell}: GET {paths[-1]} with its ETag = {status} with {len(body)} bytes; want 304 and none")
PY

# cpu BIN: the CPU time the server has used (user + system), in clock ticks.
# Per request it is a steadier measure than req/s on a shared machine:
# other processes take turns on the server's core, not its work.
cpu() { awk '{print $14 + $15}' /proc/"${spid[$1]}"/stat; }
# run BIN CELL INM SECS -> RESULT json
run() {
  local port=$APORT; [ "$1" = b ] && port=$BPORT
  BENCH_PATHS="$work/$2.paths" BENCH_INM=$3 BENCH_AUTH="$TOKEN" \
    taskset -c 0 wrk -t1 -c16 -d"${4}s" --timeout 5s -s bench/etag.lua "http://127.0.0.1:$port" 2>&1 | sed -n 's/^RESULT //p'
}
for cell in $CELLS; do run a "$cell" 0 2 >/dev/null; run b "$cell" 0 2 >/dev/null; run b "$cell" 1 2 >/dev/null; done
: >"$work/results"
for r in $(seq "$ROUNDS"); do
  order="a-200 b-200 b-304"; [ $((r % 2)) = 0 ] && order="b-304 b-200 a-200"
  for cell in $CELLS; do for setup in $order; do
    inm=0; [ "${setup#*-}" = 304 ] && inm=1
    before=$(cpu "${setup%-*}")
    result=$(run "${setup%-*}" "$cell" "$inm" "$DUR")
    echo "$r $cell $setup $(( $(cpu "${setup%-*}") - before )) $result" >>"$work/results"
  done; done
done
python3 - "$work/results" "$BASE" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo +changes)" "$(getconf CLK_TCK)" <<'PY'
import json, statistics, sys
rows = []
tick_us = 1e6 / int(sys.argv[4])
for line in open(sys.argv[1]):
    r, cell, setup, ticks, js = line.split(" ", 4)
    if js.strip():
        x = json.loads(js)
        x["cpu_us"] = int(ticks) * tick_us / max(x["requests"], 1)
        rows.append((int(r), cell, setup, x))
names = {"w1-rest": "W1 REST", "w1-gql": "W1 GraphQL GET", "w2-rest": "W2 REST", "w2-gql": "W2 GraphQL GET"}
setups = {"a-200": f"A {sys.argv[2]}, 200", "b-200": f"B {sys.argv[3]}, 200", "b-304": f"B {sys.argv[3]}, If-None-Match: 304"}
print("| round | workload | setup | req/s | p50 ms | p99 ms | server CPU µs/req | bytes/req | errors |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
for r, cell, setup, x in rows:
    errs = x["err_status"] + x["err_timeout"] + x["err_connect"] + x["err_read"]
    print(f"| {r} | {names[cell]} | {setups[setup]} | {x['rps']:,.0f} | {x['p50_ms']:.2f} | {x['p99_ms']:.2f} | {x['cpu_us']:.0f} | {x['bytes'] / max(x['requests'], 1):,.0f} | {errs} |")
print()
print("Medians over the rounds (req/s; server CPU µs per request):")
print()
print("| workload | A 200 req/s | B 200 req/s | B 304 req/s | A 200 CPU | B 200 CPU | B 200 / A 200 CPU | B 304 CPU | B 304 / B 200 CPU |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for cell in [c for c in names if any(c == r[1] for r in rows)]:
    med = lambda key, s: statistics.median([x[key] for _, c, s2, x in rows if c == cell and s2 == s] or [0])
    rps = {s: med("rps", s) for s in setups}
    cpu = {s: med("cpu_us", s) for s in setups}
    print(f"| {names[cell]} | {rps['a-200']:,.0f} | {rps['b-200']:,.0f} | {rps['b-304']:,.0f} | {cpu['a-200']:.0f} | {cpu['b-200']:.0f} | "
          f"{cpu['b-200'] / (cpu['a-200'] or 1):.3f} | {cpu['b-304']:.0f} | {cpu['b-304'] / (cpu['b-200'] or 1):.2f} |")
PY
