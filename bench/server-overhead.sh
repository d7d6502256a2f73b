#!/usr/bin/env bash
# server-overhead.sh: what the MySQL protocol and SQL layers add to a commit.
#
# The same write (update one non-indexed column of one row by primary key,
# autocommit) is measured two ways on the same data directory settings:
#
#   embedded  `quire bench commit --workload update_non_index` (engine API,
#             no network, no SQL): CPU time of the process / commits
#   server    `quire serve` driven by sysbench oltp_update_non_index (server-
#             side prepared statements): CPU time of the quire process only
#             (from /proc/PID/stat, before and after the run) / transactions,
#             and sysbench's own CPU per transaction beside it
#
# CPU per transaction is the figure that says what the server path costs:
# throughput through sysbench on a 2-core machine also pays for sysbench
# itself and for the scheduling of 2 x THREADS threads on the same cores.
# One line per thread count, runs interleaved (embedded, server).
#
# Usage: bench/server-overhead.sh            (THREADS="1 16" SECONDS_PER_RUN=20)
# Knobs: THREADS, SECONDS_PER_RUN, ROWS [10000], PORT [13316], SKIP_BUILD=1,
#        SETTING "trx_commit sync_binlog" ["1 1"], WORKDIR_PARENT [/var/tmp]
set -euo pipefail

THREADS=${THREADS:-"1 16"}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
ROWS=${ROWS:-10000}
PORT=${PORT:-13316}
SETTING=${SETTING:-"1 1"}
WORKDIR_PARENT=${WORKDIR_PARENT:-/var/tmp}
read -r TC SB <<<"$SETTING"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v sysbench >/dev/null; then
    apt-get install -y sysbench >/dev/null
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    (cd "$ROOT" && cargo build --release -q)
fi
WORK=$(mktemp -d "$WORKDIR_PARENT/quire-overhead.XXXXXX")
cp "$ROOT/target/release/quire" "$WORK/quire"
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

TICKS=$(getconf CLK_TCK)
# CPU seconds (user + system) a process has used so far.
cpu_s() { awk -v t="$TICKS" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }

KNOBS=(--innodb-flush-log-at-trx-commit="$TC" --sync-binlog="$SB")
SB_ARGS=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root
    --mysql-db=sbtest --tables=1 --table-size="$ROWS")

printf "%-9s %7s %9s %14s %16s %16s\n" target threads tps p50_or_avg_ms cpu_us_per_txn client_cpu_us
for t in $THREADS; do
    # Embedded.
    rm -rf "$WORK/emb" && mkdir "$WORK/emb"
    TIMEFORMAT='%U %S'
    { time (cd "$WORK/emb" && "$WORK/quire" bench commit --threads "$t" --seconds "$SECONDS_PER_RUN" \
        --rows "$ROWS" --json "${KNOBS[@]}" >"$WORK/emb.json"); } 2>"$WORK/emb.time"
    commits=$(sed 's/.*"commits":\([0-9]*\).*/\1/' "$WORK/emb.json")
    tps=$(sed 's/.*"tps":\([0-9.]*\).*/\1/' "$WORK/emb.json")
    p50=$(sed 's/.*"p50_us":\([0-9.]*\).*/\1/' "$WORK/emb.json")
    cpu=$(awk '{ print $1 + $2 }' "$WORK/emb.time")
    printf "%-9s %7s %9.0f %14.3f %16.1f %16s\n" embedded "$t" "$tps" "$(echo "$p50 / 1000" | bc -l)" \
        "$(echo "$cpu * 1000000 / $commits" | bc -l)" "-"

    # Server.
    rm -rf "$WORK/srv" && mkdir "$WORK/srv"
    "$WORK/quire" serve --datadir="$WORK/srv/data" --port="$PORT" --bind-address=127.0.0.1 \
        --max-connections=300 "${KNOBS[@]}" >"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        mariadb -h127.0.0.1 -P"$PORT" -uroot -e "CREATE DATABASE IF NOT EXISTS sbtest" 2>/dev/null && break
        sleep 0.1
    done
    sysbench oltp_update_non_index "${SB_ARGS[@]}" prepare >/dev/null
    before=$(cpu_s "$SERVER_PID")
    TIMEFORMAT='%U %S'
    { time sysbench oltp_update_non_index "${SB_ARGS[@]}" --threads="$t" --time="$SECONDS_PER_RUN" \
        --percentile=50 run >"$WORK/sb.out"; } 2>"$WORK/sb.time"
    after=$(cpu_s "$SERVER_PID")
    txns=$(awk '/transactions:/ { print $2 }' "$WORK/sb.out")
    stps=$(awk -F'[(]' '/transactions:/ { split($2, a, " "); print a[1] }' "$WORK/sb.out")
    p50=$(awk '/50th percentile:/ { print $3 }' "$WORK/sb.out")
    ccpu=$(awk '{ print $1 + $2 }' "$WORK/sb.time")
    printf "%-9s %7s %9.0f %14.3f %16.1f %16.1f\n" server "$t" "$stps" "$p50" \
        "$(echo "($after - $before) * 1000000 / $txns" | bc -l)" "$(echo "$ccpu * 1000000 / $txns" | bc -l)"
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
done
