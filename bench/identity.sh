#!/usr/bin/env bash
# What a provider token costs against the service's own (issue 25): W1 (50
# materials of a category) over REST and over GraphQL sent with GET, on the
# shared 200,000-order dataset, with one server of this checkout that
# accepts both kinds, called in turn with
#
#   own        a token of `server token create --configurator 1`
#   provider   an ES256 access token of a real OpenID provider (oidc-provider,
#              internal/oidctest, client credentials) for configurator 1
#
# Parameters are drawn as ../shared/bench draws them (category 1-50). The
# server runs pinned to CPU 1 with one Go thread, wrk on CPU 0, as
# compare.sh runs them; rounds alternate the setups (own first in odd rounds)
# and every round is printed (req/s, latency, and the server's CPU time per
# request, steadier than req/s on a shared machine), then the medians. Needs
# Node and `npm ci --prefix internal/oidctest`.
#
#   bash bench/identity.sh [-d SECS] [-r ROUNDS]     (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(cd ../shared/bench && pwd)
DUR=5 ROUNDS=4 CELLS="w1-rest w1-gql"
while [ $# -gt 0 ]; do
  case "$1" in -d) DUR=$2; shift 2;; -r) ROUNDS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
work=$(mktemp -d); pids=(); PDBNAME=identity_bench_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $PDBNAME WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
sql() { PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset (about 10 s)"; (cd "$here" && sql -d bench -f dataset.sql >/dev/null)
fi
[ -d internal/oidctest/node_modules/oidc-provider ] || npm ci --prefix internal/oidctest --no-audit --no-fund --loglevel=error

go build -o "$work/server" ./cmd/server
sql -d postgres -c "CREATE DATABASE $PDBNAME"
PDB="postgres://postgres@127.0.0.1:5432/$PDBNAME?sslmode=disable"
"$work/server" migrate --database-url "$PDB" >/dev/null 2>&1
sql -d "$PDBNAME" -v src="'dbname=bench user=postgres host=127.0.0.1'" -f "$here/load-product.sql" >/dev/null
sql -d "$PDBNAME" -f bench/after-load.sql >/dev/null
OWN=$("$work/server" token create --configurator 1 --database-url "$PDB" 2>/dev/null | tail -n1)

# The provider, on CPU 0 beside wrk (it only answers the one token request).
(cd internal/oidctest && OIDCTEST_AUDIENCE=https://catalogue.bench \
  OIDCTEST_CLIENTS='{"bench":{"claims":{"owner_id":1,"configurator_id":1},"alg":"ES256","ttl":7200}}' \
  exec taskset -c 0 node provider.mjs >"$work/idp.out" 2>"$work/idp.log") & pids+=($!)
for _ in $(seq 200); do [ -s "$work/idp.out" ] && break; sleep 0.3; done
ISSUER=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$work/idp.out")
PROVIDER=$(curl -fs -u bench:bench "$ISSUER/token" -d grant_type=client_credentials -d scope=catalogue:open_api |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')

PORT=5196
(cd "$work" && GOMAXPROCS=1 DEMO=false OIDC_ISSUER=$ISSUER OIDC_AUDIENCE=https://catalogue.bench exec taskset -c 1 ./server serve \
  --addr 127.0.0.1:"$PORT" --database-url "$PDB" --public-url http://127.0.0.1:"$PORT" >"$work/server.log" 2>&1) & pids+=($!)
spid=$!
for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.3; done

echo "checking every path with both tokens"
python3 - "$work" "$PORT" "$OWN" "$PROVIDER" "$here/workloads/gql" <<'PY'
import http.client, json, sys, urllib.parse
work, port, own, provider, gql = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
L = "/api/open-api/v1"
q = open(f"{gql}/w1.graphql").read()
cells = {
    "w1-rest": [f"{L}/materials?per_page=50&page=1&category_id={c}&order_by=created_at&order=desc" for c in range(1, 51)],
    "w1-gql": ["/graphql?" + urllib.parse.urlencode({"query": q, "variables": json.dumps({"c": str(c)})}) for c in range(1, 51)],
}
conn = http.client.HTTPConnection("127.0.0.1", port)
for cell, paths in cells.items():
    with open(f"{work}/{cell}.paths", "w") as out:
        for p in paths:
            bodies = []
            for tok in (own, provider):
                conn.request("GET", p, headers={"Authorization": "Bearer " + tok})
                r = conn.getresponse()
                body = r.read()
                if r.status != 200 or b'"errors"' in body:
                    sys.exit(f"{cell}: GET {p} = {r.status}: {body[:300]!r}")
                bodies.append(body)
            if bodies[0] != bodies[1]:
                sys.exit(f"{cell}: GET {p}: the two tokens read different answers")
            out.write(f"{p}\t-\n")
PY

cpu() { awk '{print $14 + $15}' /proc/"$spid"/stat; }
# run TOKEN CELL SECS -> RESULT json
run() {
  BENCH_PATHS="$work/$2.paths" BENCH_INM=0 BENCH_AUTH="$1" \
    taskset -c 0 wrk -t1 -c16 -d"${3}s" --timeout 5s -s bench/etag.lua "http://127.0.0.1:$PORT" 2>&1 | sed -n 's/^RESULT //p'
}
for cell in $CELLS; do run "$OWN" "$cell" 2 >/dev/null; run "$PROVIDER" "$cell" 2 >/dev/null; done
: >"$work/results"
for r in $(seq "$ROUNDS"); do
  order="own provider"; [ $((r % 2)) = 0 ] && order="provider own"
  for cell in $CELLS; do for setup in $order; do
    tok=$OWN; [ "$setup" = provider ] && tok=$PROVIDER
    before=$(cpu)
    result=$(run "$tok" "$cell" "$DUR")
    echo "$r $cell $setup $(( $(cpu) - before )) $result" >>"$work/results"
  done; done
done
python3 - "$work/results" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo +changes)" "$(getconf CLK_TCK)" <<'PY'
import json, statistics, sys
rows = []
tick_us = 1e6 / int(sys.argv[3])
for line in open(sys.argv[1]):
    r, cell, setup, ticks, js = line.split(" ", 4)
    if js.strip():
        x = json.loads(js)
        x["cpu_us"] = int(ticks) * tick_us / max(x["requests"], 1)
        rows.append((int(r), cell, setup, x))
names = {"w1-rest": "W1 REST", "w1-gql": "W1 GraphQL GET"}
print(f"identity.sh at {sys.argv[2]}")
print()
print("| round | workload | token | req/s | p50 ms | p99 ms | server CPU µs/req | errors |")
print("|---:|---|---|---:|---:|---:|---:|---:|")
for r, cell, setup, x in rows:
    errs = x["err_status"] + x["err_timeout"] + x["err_connect"] + x["err_read"]
    print(f"| {r} | {names[cell]} | {setup} | {x['rps']:,.0f} | {x['p50_ms']:.2f} | {x['p99_ms']:.2f} | {x['cpu_us']:.0f} | {errs} |")
print()
print("Medians over the rounds:")
print()
print("| workload | own req/s | provider req/s | own CPU µs/req | provider CPU µs/req | provider / own CPU |")
print("|---|---:|---:|---:|---:|---:|")
for cell in names:
    med = lambda key, s: statistics.median([x[key] for _, c, s2, x in rows if c == cell and s2 == s] or [0])
    print(f"| {names[cell]} | {med('rps', 'own'):,.0f} | {med('rps', 'provider'):,.0f} | {med('cpu_us', 'own'):.0f} | "
          f"{med('cpu_us', 'provider'):.0f} | {med('cpu_us', 'provider') / (med('cpu_us', 'own') or 1):.3f} |")
PY
