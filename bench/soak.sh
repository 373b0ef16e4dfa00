#!/usr/bin/env bash
# A compressed year (issue 42, item 4): writes with webhooks active while
# the retention runs with windows of seconds, and whether every table and
# the server's resources reach a plateau. One replica on PostgreSQL at
# 127.0.0.1:5432: a throwaway database bench_soak_<pid> holding a copy of
# the shared 200,000-order dataset (../shared/bench, as compare.sh loads it;
# W2 reads its 5,000 materials), dropped at the end. bench/soakload drives
# the writes (order creations over REST with an Idempotency-Key, a tenth
# sent twice, and order updates), runs two webhook receivers (one answers
# at once, one fails half of its attempts, so deliveries retry), samples
# every -every and prints the table and the verdict; exit status 1 when it
# fails.
#
#   bash bench/soak.sh [-d 20m] [-every 30s] [-warm DUR] [-creates 20] [-updates 10] [-own-pg]   (from the project root)
#
# The shared development server at 5432 runs with autovacuum off, so no
# table's size can plateau there (dead rows are never reclaimed): the
# verdict then shows the sizes without judging them. -own-pg runs the
# product's database in a throwaway PostgreSQL of its own instead (initdb
# + pg_ctl on a free port, `pg_config --bindir`, PostgreSQL's defaults:
# autovacuum on), which still copies the dataset from 5432's bench.
#
# With PPROF_ADDR set (say 127.0.0.1:6061) the server's CPU profile over
# each W2 measure (after the warm-up, at the end, and once the writes
# stopped) is saved in SOAK_PROFILES (default /tmp/soak-profiles) as
# w2-start.pb.gz, w2-end.pb.gz and w2-after.pb.gz, and its heap profile
# after each as heap-start.pb.gz and so on.
#
# At the end, W2 runs in turn against the soaked server, one started then
# on the same database and one on a fresh copy of the dataset (not
# judged): a slower end is the soaked process's own when only it is
# slower, the soaked database's when only the fresh copy is faster.
#
# -d 3m is a short run to check the script; the verdict needs the full
# 20 minutes. The windows (RETENTION_* below) are seconds, so the tables
# plateau within a minute; the warm-up (default a quarter of -d) is left
# out of the judgement.
set -euo pipefail
cd "$(dirname "$0")/.."
here=../shared/bench
[ -d "$here" ] || here=/work/shared/bench
# Samples every 17 s: a period prime to River's cleaner (30 s), so that the
# samples meet river_job at every phase of it, its peak (just before a
# clean) included; every 30 s they met it at one phase, and a drift of
# that phase read as growth.
DUR=20m EVERY=17s WARM=0s CREATES=20 UPDATES=10 OWN=
while [ $# -gt 0 ]; do
  case "$1" in
    -d) DUR=$2; shift 2;; -every) EVERY=$2; shift 2;; -warm) WARM=$2; shift 2;;
    -creates) CREATES=$2; shift 2;; -updates) UPDATES=$2; shift 2;; -own-pg) OWN=1; shift;;
    *) echo "unknown option $1"; exit 2;;
  esac
done
# The compressed windows: an event or an ended delivery is kept 10 s, a
# key 10 s, River's finished jobs 10 s (its cleaner runs every 30 s; a discarded one 2 min), the
# leader removes every 5 s; a failing delivery is retried after 1, 2 and
# 4 s, then ends FAILED.
export EVENT_RETENTION=${EVENT_RETENTION:-10s} WEBHOOK_DELIVERY_RETENTION=${WEBHOOK_DELIVERY_RETENTION:-10s}
export IDEMPOTENCY_TTL=${IDEMPOTENCY_TTL:-10s} RETENTION_EVERY=${RETENTION_EVERY:-5s} JOB_RETENTION=${JOB_RETENTION:-10s}
export WEBHOOK_RETRY_SCHEDULE=${WEBHOOK_RETRY_SCHEDULE:-1s,2s,4s}
work=$(mktemp -d); pids=(); DB=bench_soak_$$ PGP=5432
bin=$(pg_config --bindir)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  [ -f "$work/server.log" ] && echo "server log: $(grep -c 'level=ERROR' "$work/server.log" || true) ERROR lines," \
    "$(grep -c 'rebuilt an index' "$work/server.log" || true) index rebuilds by the retention"
  if [ -n "$OWN" ]; then as_pg "$bin/pg_ctl" stop -m immediate -D "$work/data" >/dev/null 2>&1 || true
  else for d in "$DB" "${DB}_new"; do
    psql -h 127.0.0.1 -U postgres -qtA -d postgres -c "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true
  done; fi
  rm -rf "$work"
}
trap cleanup EXIT
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
pg_isready -h 127.0.0.1 -q || { pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start; sleep 2; }
sql() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
[ "$(sql -d postgres -c "SELECT 1 FROM pg_database WHERE datname='bench'")" = 1 ] || sql -d postgres -c "CREATE DATABASE bench"
if [ "$(sql -d bench -c "SELECT count(*) FROM orders" 2>/dev/null || echo 0)" != 200000 ]; then
  echo "loading the reference dataset into database bench (once)"; (cd "$here" && sql -d bench -f dataset.sql >/dev/null)
fi
if [ -n "$OWN" ]; then
  [ "$(id -u)" = 0 ] && chown postgres "$work"
  PGP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  as_pg "$bin/initdb" -D "$work/data" -U postgres -A trust -E UTF8 --no-instructions >/dev/null
  as_pg "$bin/pg_ctl" start -w -D "$work/data" -l "$work/pg.log" \
    -o "-c port=$PGP -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work" >/dev/null
fi
sql -p "$PGP" -d postgres -c "CREATE DATABASE $DB"
url="postgres://postgres@127.0.0.1:$PGP/$DB?sslmode=disable"
go build -o "$work/server" ./cmd/server
go build -o "$work/load" ./bench/soakload
"$work/server" migrate --database-url "$url" >/dev/null
sql -p "$PGP" -d "$DB" -v src="'dbname=bench user=postgres host=127.0.0.1 port=5432'" -f "$here/load-product.sql" >/dev/null
sql -p "$PGP" -d "$DB" -f bench/after-load.sql >/dev/null
open=$("$work/server" token create --configurator 1 --database-url "$url" 2>/dev/null | tail -n1)
dash=$("$work/server" token create --dashboard --owner 1 --database-url "$url" 2>/dev/null | tail -n1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DATABASE_URL=$url ADDR=127.0.0.1:$port DEMO=false WEBHOOK_ALLOW_PRIVATE=true RATE_LIMIT_PER_MINUTE=0 \
  "$work/server" serve >"$work/server.log" 2>&1 &
server=$!; pids+=("$server")
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
echo "soak: $DUR of writes ($CREATES creations and $UPDATES updates a second), samples every $EVERY;" \
  "EVENT_RETENTION=$EVENT_RETENTION WEBHOOK_DELIVERY_RETENTION=$WEBHOOK_DELIVERY_RETENTION IDEMPOTENCY_TTL=$IDEMPOTENCY_TTL" \
  "RETENTION_EVERY=$RETENTION_EVERY JOB_RETENTION=$JOB_RETENTION WEBHOOK_RETRY_SCHEDULE=$WEBHOOK_RETRY_SCHEDULE;" \
  "PostgreSQL at port $PGP, autovacuum $(sql -p "$PGP" -d "$DB" -c 'SHOW autovacuum'); machine load $(cut -d' ' -f1-3 /proc/loadavg)"
# W2's measures count PostgreSQL's CPU too when it runs here (its
# postmaster's pid), and save the server's CPU profile over them when it
# serves its profiles (PPROF_ADDR) in SOAK_PROFILES.
if [ -n "$OWN" ]; then pgpid=$(head -n1 "$work/data/postmaster.pid")
else pgpid=$(head -n1 "$(sql -d postgres -c 'SHOW data_directory')/postmaster.pid" 2>/dev/null || echo 0); fi
profiles=${SOAK_PROFILES:-/tmp/soak-profiles}; mkdir -p "$profiles"
status=0
"$work/load" -base "http://127.0.0.1:$port" -token "$open" -dashboard "$dash" -db "$url" -pid "$server" \
  -pg-pid "$pgpid" -pprof "${PPROF_ADDR:-}" -profiles "$profiles" \
  -wrk-lua "$here/workloads/wrk.lua" -d "$DUR" -every "$EVERY" -warm "$WARM" -creates "$CREATES" -updates "$UPDATES" || status=$?
# Not judged: W2 at the end against this server and two started now, in
# turn: one on the same database, one on a fresh copy of the dataset.
# Whose a slower end is: this process's state (only it is slower), the
# soaked database's (only the fresh copy is faster) or the machine's.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sql -p "$PGP" -d postgres -c "CREATE DATABASE ${DB}_new"
nurl="postgres://postgres@127.0.0.1:$PGP/${DB}_new?sslmode=disable"
"$work/server" migrate --database-url "$nurl" >/dev/null
sql -p "$PGP" -d "${DB}_new" -v src="'dbname=bench user=postgres host=127.0.0.1 port=5432'" -f "$here/load-product.sql" >/dev/null
sql -p "$PGP" -d "${DB}_new" -f bench/after-load.sql >/dev/null
nopen=$("$work/server" token create --configurator 1 --database-url "$nurl" 2>/dev/null | tail -n1)
fport=$(free_port) nport=$(free_port)
DATABASE_URL=$url ADDR=127.0.0.1:$fport DEMO=false WEBHOOK_ALLOW_PRIVATE=true RATE_LIMIT_PER_MINUTE=0 PPROF_ADDR= \
  "$work/server" serve >"$work/fresh.log" 2>&1 &
fresh=$!; pids+=("$fresh")
DATABASE_URL=$nurl ADDR=127.0.0.1:$nport DEMO=false RATE_LIMIT_PER_MINUTE=0 PPROF_ADDR= \
  "$work/server" serve >"$work/new.log" 2>&1 &
new=$!; pids+=("$new")
for p in "$fport" "$nport"; do
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$p/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
done
"$work/load" -base "http://127.0.0.1:$port" -token "$open" -pid "$server" -wrk-lua "$here/workloads/wrk.lua" \
  -ref "fresh process=http://127.0.0.1:$fport=$fresh=$open" \
  -ref "fresh process and dataset=http://127.0.0.1:$nport=$new=$nopen" || true
echo "machine load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
