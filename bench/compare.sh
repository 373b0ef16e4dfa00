#!/usr/bin/env bash
# The product against the limit proxy on the shared 200,000-order dataset:
# ../shared/bench/compare.sh, run from the project root, its ratio table also
# written to bench/last-compare.txt. Options pass through (-d SECS -r ROUNDS
# -w 1,2,3,4,5; REST_MIN / GQL_MIN in the environment). Record what it prints
# in bench/RESULTS.md with each performance change.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=../shared/bench
[ -f "$shared/compare.sh" ] || { echo "bench: $shared/compare.sh not found (../shared must be beside the project)"; exit 2; }
set +e
bash "$shared/compare.sh" "$@" 2>&1 | tee bench/last-compare.txt
status=${PIPESTATUS[0]}
exit "$status"
