#!/usr/bin/env bash
# _entities of 100 Order representations (what a federation gateway sends)
# against a 100-row ordersPage with the same fields, in the service's CPU
# time per request (graph BenchmarkEntities, in one process: the endpoint,
# gqlgen, the fast path, the resolvers; SQLite's work included, a
# PostgreSQL backend's not). Prints both and their ratio per backend; the
# bar (issue 41) is at most 2x. PostgreSQL runs when TEST_DATABASE_URL is set.
#
#   bash bench/entities.sh [-n REQUESTS] [-r ROUNDS]      (from the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
N=2000 ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in -n) N=$2; shift 2;; -r) ROUNDS=$2; shift 2;; *) echo "unknown option $1"; exit 2;; esac
done
out=$(go test ./graph -run '^$' -bench '^BenchmarkEntities$' -benchtime "${N}x" -count "$ROUNDS" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -E '^Benchmark'
echo "$out" | awk '
  /^BenchmarkEntities\// {
    split($1, p, "/"); be = p[2]; name = p[3]; sub(/-[0-9]+$/, "", name)
    for (i = 2; i <= NF; i++) if ($(i+1) == "cpu-ns/op") { cpu[be, name] += $i; n[be, name]++ }
    bes[be] = 1
  }
  END {
    for (be in bes) {
      e = cpu[be, "entities100"] / n[be, "entities100"]; o = cpu[be, "ordersPage100"] / n[be, "ordersPage100"]
      printf "%s: _entities x100 %.0f us CPU, ordersPage x100 %.0f us CPU: %.2fx\n", be, e / 1000, o / 1000, e / o
    }
  }'
