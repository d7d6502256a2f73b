#!/usr/bin/env bash
# privilege-overhead.sh: what privilege checks cost on the hot path.
#
# Runs sysbench oltp_point_select and oltp_update_non_index against one
# `quire serve`, alternately as root (global privileges: every check passes
# at the first level) and as an account holding only `ALL ON sbtest.*` (every
# check goes down to the database level), and prints TPS per run and the
# ratio account/root. Runs alternate so both sides see the same machine load.
#
# Usage: BIN=target/release/quire bench/privilege-overhead.sh
# Knobs: BIN [target/release/quire], SECONDS_PER_RUN [20], THREADS [8],
#        RUNS [2], TABLES [2], TABLE_SIZE [10000], PORT [random 34000-34999],
#        WORKDIR_PARENT [/var/tmp],
#        WORKLOADS ["oltp_point_select oltp_update_non_index"], SERVE_ARGS []
set -euo pipefail

BIN=${BIN:-target/release/quire}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
THREADS=${THREADS:-8}
RUNS=${RUNS:-2}
TABLES=${TABLES:-2}
TABLE_SIZE=${TABLE_SIZE:-10000}
PORT=${PORT:-$((34000 + RANDOM % 1000))}
WORKDIR_PARENT=${WORKDIR_PARENT:-/var/tmp}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_update_non_index"}

WORK=$(mktemp -d "$WORKDIR_PARENT/quire-priv.XXXXXX")
"$BIN" serve --datadir="$WORK/data" --port="$PORT" ${SERVE_ARGS:-} >"$WORK/serve.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT

sql() { mariadb -h127.0.0.1 -P"$PORT" -uroot -N -e "$1"; }
for _ in $(seq 150); do
    sql 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.2
done
sql "CREATE DATABASE sbtest; CREATE USER 'sb'@'%' IDENTIFIED BY 'sbpw'; GRANT ALL ON sbtest.* TO 'sb'@'%'"

sb() { # workload user password command
    sysbench "$1" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" \
        --mysql-user="$2" --mysql-password="$3" --mysql-db=sbtest \
        --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" \
        --time="$SECONDS_PER_RUN" --report-interval=0 "$4"
}
sb oltp_common root '' prepare >/dev/null

printf '%-24s %-5s %4s %12s\n' workload user run tps
for wl in $WORKLOADS; do
    declare -A sum=([root]=0 [sb]=0)
    for run in $(seq "$RUNS"); do
        for who in root sb; do
            pw=''
            [ "$who" = sb ] && pw=sbpw
            tps=$(sb "$wl" "$who" "$pw" run | awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}')
            printf '%-24s %-5s %4s %12s\n' "$wl" "$who" "$run" "$tps"
            sum[$who]=$(echo "${sum[$who]} + $tps" | bc -l)
        done
    done
    printf '%-24s ratio sb/root = %.3f\n' "$wl" "$(echo "${sum[sb]} / ${sum[root]}" | bc -l)"
done
