#!/usr/bin/env bash
# What one malformed cursor costs the server (issue 40): a msgpack value
# nested as deep as a 1 MiB request body allows (0x91, a one-element array,
# repeated, as unpadded base64 just under 1 MiB), sent as `after:` to the
# orders connection over GraphQL on PostgreSQL. For each build (this
# checkout, and with -a DIR another checkout, say a `git worktree` of the
# commit before) it starts one server on a fresh database with the demo
# data, warms it up with a few ordinary requests, then sends the cursor -n
# times one after the other and prints, per request: the server's CPU time
# (user+system from /proc/PID/stat), its resident memory growth (VmRSS
# after the requests minus before) and peak (VmHWM), the answer's status and
# code, and the bytes the server logged. CPU time is counted in clock ticks
# (10 ms), so this checkout gets -n requests (default 100) and the build of
# -a, which takes seconds for each, -nb (default 1).
#
#   bash bench/cursor.sh [-a DIR] [-n REQUESTS] [-nb REQUESTS]   (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
A="" N=100 NB=1
while [ $# -gt 0 ]; do
  case "$1" in -a) A=$2; shift 2;; -n) N=$2; shift 2;; -nb) NB=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
work=$(mktemp -d); pids=(); PDBNAME=cursor_bench_$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"
  psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $PDBNAME WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
sql() { PGOPTIONS="-c client_min_messages=warning" psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }

go build -o "$work/after" ./cmd/server
builds=(after)
if [ -n "$A" ]; then (cd "$A" && go build -o "$work/before" ./cmd/server); builds=(before after); fi
sql -d postgres -c "CREATE DATABASE $PDBNAME"
PDB="postgres://postgres@127.0.0.1:5432/$PDBNAME?sslmode=disable"
"$work/after" migrate --database-url "$PDB" >/dev/null 2>&1
"$work/after" seed --demo --database-url "$PDB" >/dev/null 2>&1
TOKEN=$("$work/after" token create --configurator 1 --database-url "$PDB" 2>/dev/null | tail -n1)

# The body: {"query": ..., "variables": {"c": CURSOR}} of 1 MiB at most.
python3 - "$work/body.json" <<'PY'
import base64, json, sys
q = "query($c: Cursor) { orders(first: 5, after: $c) { edges { cursor node { id } } } }"
room = (1 << 20) - len(json.dumps({"query": q, "variables": {"c": ""}})) - 16
raw = bytes([0x82, 0xa1, ord("i"), 0x01, 0xa1, ord("v")]) + b"\x91" * (room * 3 // 4)
cursor = base64.b64encode(raw).decode().rstrip("=")[:room]
cursor = cursor[: len(cursor) - len(cursor) % 4]
open(sys.argv[1], "w").write(json.dumps({"query": q, "variables": {"c": cursor}}))
PY
echo "body: $(stat -c %s "$work/body.json") bytes"

stat_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
PORT=5197
for b in "${builds[@]}"; do
  (cd "$work" && GOMAXPROCS=1 DEMO=false exec taskset -c 1 "./$b" serve --addr 127.0.0.1:"$PORT" --database-url "$PDB" \
    --public-url http://127.0.0.1:"$PORT" --request-timeout 120s >"$work/$b.log" 2>&1) & pids+=($!)
  spid=$!
  for _ in $(seq 100); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.3; done
  for _ in $(seq 20); do
    curl -fs -o /dev/null "http://127.0.0.1:$PORT/graphql" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -d '{"query":"{ orders(first: 5) { edges { cursor node { id } } } }"}'
  done
  sleep 1
  tck=$(getconf CLK_TCK); cpu0=$(stat_cpu "$spid"); rss0=$(status_kb "$spid" VmRSS); log0=$(stat -c %s "$work/$b.log")
  answer=""; n=$N; [ "$b" = before ] && n=$NB
  for _ in $(seq "$n"); do
    answer=$(curl -s -o "$work/answer.json" -w '%{http_code}' "http://127.0.0.1:$PORT/graphql" -H "Authorization: Bearer $TOKEN" \
      -H 'Content-Type: application/json' --data-binary @"$work/body.json")
  done
  cpu1=$(stat_cpu "$spid"); rss1=$(status_kb "$spid" VmRSS); hwm=$(status_kb "$spid" VmHWM); log1=$(stat -c %s "$work/$b.log")
  code=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])).get("errors") or [{}]; x=e[0].get("extensions",{}); print(x.get("code"), x.get("field"))' "$work/answer.json" 2>/dev/null || echo "?")
  python3 - "$b" "$n" "$tck" "$cpu0" "$cpu1" "$rss0" "$rss1" "$hwm" "$log0" "$log1" "$answer" "$code" <<'PY'
import sys
b, n, tck, c0, c1, r0, r1, hwm, l0, l1, status, code = sys.argv[1:]
n, tck = int(n), int(tck)
cpu_ms = (int(c1) - int(c0)) * 1000 / tck / n
print(f"{b:7} CPU {cpu_ms:9.1f} ms/request   RSS growth {(int(r1) - int(r0)) / 1024 / n:8.1f} MB/request"
      f"   peak RSS {int(hwm) / 1024:7.1f} MB   log {(int(l1) - int(l0)) / n:10.0f} B/request   answer {status} {code}")
PY
  kill "$spid"; wait "$spid" 2>/dev/null || true
done
