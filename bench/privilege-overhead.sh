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
#        WORKLOADS ["oltp_point_select oltp_update_non_index"], SERVE_ARGS [],
#        MODE [alternate | concurrent: both accounts at once, same load |
#              callgrind: instructions per transaction under valgrind, EVENTS
#              per run (default 5000), one thread]
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
if [ "${MODE:-alternate}" = callgrind ]; then
    # Instructions, not seconds: repeatable on a loaded machine.
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" \
        "$BIN" serve --datadir="$WORK/data" --port="$PORT" ${SERVE_ARGS:-} \
        >"$WORK/serve.log" 2>&1 &
else
    "$BIN" serve --datadir="$WORK/data" --port="$PORT" ${SERVE_ARGS:-} >"$WORK/serve.log" 2>&1 &
fi
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT

sql() { mariadb -h127.0.0.1 -P"$PORT" -uroot -N -e "$1"; }
for _ in $(seq 600); do
    sql 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.2
done
sql "CREATE DATABASE sbtest; CREATE USER 'sb'@'%' IDENTIFIED BY 'sbpw'; GRANT ALL ON sbtest.* TO 'sb'@'%'"

sb() { # workload user password command [extra sysbench options]
    sysbench "$1" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" \
        --mysql-user="$2" --mysql-password="$3" --mysql-db=sbtest \
        --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$THREADS" \
        --time="$SECONDS_PER_RUN" --report-interval=0 "${@:5}" "$4"
}
sb oltp_common root '' prepare >/dev/null

tps_of() { awk '/transactions:/ {gsub(/[(]/, "", $3); print $3}' "$1"; }

if [ "${MODE:-alternate}" = callgrind ]; then
    # Each run: zero the counters, EVENTS transactions on one thread,
    # dump; instructions per transaction for root and for sb. One
    # discarded run per workload warms the caches first, and the sb
    # account has logged in once, so its runs take the fast path.
    EVENTS=${EVENTS:-5000}
    mariadb -h127.0.0.1 -P"$PORT" -usb -psbpw -e 'SELECT 1' >/dev/null
    n=0
    instr() { # workload user password: instructions per transaction
        callgrind_control -z "$PID" >/dev/null 2>&1
        THREADS=1 SECONDS_PER_RUN=0 sb "$1" "$2" "$3" run --events="$EVENTS" >/dev/null
        n=$((n + 1))
        callgrind_control -d "run$n" "$PID" >/dev/null 2>&1
        local f
        f=$(ls -t "$WORK"/cg.out* | head -1)
        echo "$(awk '/^(summary|totals):/ {print $2; exit}' "$f") / $EVENTS" | bc
    }
    printf '%-24s %-5s %4s %14s\n' workload user run instr/txn
    for wl in $WORKLOADS; do
        instr "$wl" root '' >/dev/null
        declare -A sum=([root]=0 [sb]=0)
        for run in $(seq "$RUNS"); do
            for who in root sb; do
                pw=''
                [ "$who" = sb ] && pw=sbpw
                per=$(instr "$wl" "$who" "$pw")
                printf '%-24s %-5s %4s %14s\n' "$wl" "$who" "$run" "$per"
                sum[$who]=$(echo "${sum[$who]} + $per" | bc)
            done
        done
        # CPU-bound TPS goes as 1/instructions: sb's TPS relative to root.
        printf '%-24s instructions root/sb = %.4f (TPS-equivalent sb/root)\n' "$wl" \
            "$(echo "${sum[root]} / ${sum[sb]}" | bc -l)"
    done
    exit 0
fi

if [ "${MODE:-alternate}" = concurrent ]; then
    # Both accounts at once, THREADS each, against the same server: every
    # run sees the same machine load on both sides, so the ratio holds on
    # a shared, noisy machine.
    printf '%-24s %4s %12s %12s %8s\n' workload run root sb sb/root
    for wl in $WORKLOADS; do
        for run in $(seq "$RUNS"); do
            sb "$wl" root '' run >"$WORK/root.out" &
            r=$!
            sb "$wl" sb sbpw run >"$WORK/sb.out"
            wait "$r"
            a=$(tps_of "$WORK/root.out")
            b=$(tps_of "$WORK/sb.out")
            printf '%-24s %4s %12s %12s %8.3f\n' "$wl" "$run" "$a" "$b" \
                "$(echo "$b / $a" | bc -l)"
        done
    done
    exit 0
fi

printf '%-24s %-5s %4s %12s\n' workload user run tps
for wl in $WORKLOADS; do
    declare -A sum=([root]=0 [sb]=0)
    for run in $(seq "$RUNS"); do
        for who in root sb; do
            pw=''
            [ "$who" = sb ] && pw=sbpw
            sb "$wl" "$who" "$pw" run >"$WORK/run.out"
            tps=$(tps_of "$WORK/run.out")
            printf '%-24s %-5s %4s %12s\n' "$wl" "$who" "$run" "$tps"
            sum[$who]=$(echo "${sum[$who]} + $tps" | bc -l)
        done
    done
    printf '%-24s ratio sb/root = %.3f\n' "$wl" "$(echo "${sum[sb]} / ${sum[root]}" | bc -l)"
done
