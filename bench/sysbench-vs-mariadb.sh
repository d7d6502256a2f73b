#!/usr/bin/env bash
# sysbench-vs-mariadb.sh: run the same sysbench workloads against `quire serve`
# and MariaDB 10.11, at the same durability settings, and print one table.
#
# Usage (from anywhere; as root, or with sudo available for apt-get):
#
#   bench/sysbench-vs-mariadb.sh
#   SECONDS_PER_RUN=20 THREADS="16 64" SETTINGS="1 1,2 1" bench/sysbench-vs-mariadb.sh
#
# Knobs (environment variables; defaults in brackets):
#   SECONDS_PER_RUN  seconds of each `sysbench run`                        [30]
#   THREADS          sysbench --threads; a space-separated list is swept   [16]
#   TABLES           sysbench --tables                                      [4]
#   TABLE_SIZE       sysbench --table-size (rows per table)                 [10000]
#   SETTINGS         comma-separated "trx_commit sync_binlog" pairs, i.e.
#                    innodb_flush_log_at_trx_commit and sync_binlog         ["1 1,2 1"]
#   WORKLOADS        space-separated sysbench Lua tests
#                    [oltp_write_only oltp_update_non_index oltp_read_write oltp_point_select]
#   BUFFER_POOL      innodb_buffer_pool_size for both servers               [128M]
#   PS_MODE          sysbench --db-ps-mode (auto = server-side prepared
#                    statements, disable = text protocol)                  [auto]
#   QUIRE_PORT       TCP port for quire (127.0.0.1 only)                    [13306]
#   MARIADB_PORT     TCP port for MariaDB (127.0.0.1 only)                  [13307]
#   OUT              where the final table is written   [bench/results/sysbench-vs-mariadb-<time>.txt]
#   WORKDIR_PARENT   where the temporary data directories go (use a real
#                    disk, not tmpfs, or fsync costs nothing)               [/var/tmp]
#   QUIRE_EXTRA      extra `quire serve` arguments                          []
#   MARIADB_EXTRA    extra `mariadbd` arguments (e.g. --binlog-format=ROW)  []
#   SKIP_BUILD=1     use the existing target/release/quire
#
# What it does:
#   1. installs Debian's sysbench, mariadb-server and mariadb-client if missing;
#   2. builds quire (`cargo build --release`) and copies the binary to the work
#      directory (so a rebuild during the run cannot change what is measured);
#   3. for each setting: starts quire and a private MariaDB (own datadir, socket,
#      port, --no-defaults so /etc/mysql is not read) with the same buffer pool,
#      binlog on, the setting's innodb_flush_log_at_trx_commit / sync_binlog and
#      max_connections=300, everything else at each server's defaults; checks
#      the values took effect; then for each workload and thread count runs
#      prepare / run / cleanup on quire and then on MariaDB (interleaved, so both
#      sides of a ratio see the same machine load); stops both servers;
#   4. prints the table (target, workload, setting, threads, TPS, avg and P99
#      latency, ignored errors/s) and writes it to $OUT.
# The system MariaDB service and /var/lib/mysql are never touched; everything
# listens on 127.0.0.1 only; both servers are stopped and the work directory
# removed on exit, also on failure or Ctrl-C. A failing sysbench step is
# recorded as FAIL in the table (its log is kept under bench/results/) and the
# run continues.

set -euo pipefail

SECONDS_PER_RUN=${SECONDS_PER_RUN:-30}
THREADS=${THREADS:-16}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
SETTINGS=${SETTINGS:-"1 1,2 1"}
WORKLOADS=${WORKLOADS:-"oltp_write_only oltp_update_non_index oltp_read_write oltp_point_select"}
BUFFER_POOL=${BUFFER_POOL:-128M}
PS_MODE=${PS_MODE:-auto}
QUIRE_PORT=${QUIRE_PORT:-13306}
MARIADB_PORT=${MARIADB_PORT:-13307}
WORKDIR_PARENT=${WORKDIR_PARENT:-/var/tmp}
QUIRE_EXTRA=${QUIRE_EXTRA:-}
MARIADB_EXTRA=${MARIADB_EXTRA:-}
SKIP_BUILD=${SKIP_BUILD:-0}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RESULTS_DIR="$REPO/bench/results"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=${OUT:-"$RESULTS_DIR/sysbench-vs-mariadb-$STAMP.txt"}
LOGDIR="$RESULTS_DIR/logs-$STAMP"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- packages --
install_packages() {
    local missing=()
    command -v sysbench >/dev/null || missing+=(sysbench)
    command -v mariadbd >/dev/null || missing+=(mariadb-server)
    command -v mariadb >/dev/null || missing+=(mariadb-client)
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]}"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    # RUNLEVEL=1 and policy-rc.d keep the package from starting the system service.
    local rc=/usr/sbin/policy-rc.d made_rc=0
    if [[ ! -e $rc ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$rc" >/dev/null
        "${sudo[@]}" chmod +x "$rc"
        made_rc=1
    fi
    DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 "${sudo[@]}" apt-get install -y -q "${missing[@]}"
    ((made_rc)) && "${sudo[@]}" rm -f "$rc"
    return 0
}

# ---------------------------------------------------------------- cleanup --
WORK=""
QUIRE_PID=""
MARIADB_PID=""

stop_quire() {
    [[ -n $QUIRE_PID ]] || return 0
    if kill -0 "$QUIRE_PID" 2>/dev/null; then
        kill -TERM "$QUIRE_PID" 2>/dev/null || true
        for _ in $(seq 1 300); do kill -0 "$QUIRE_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$QUIRE_PID" 2>/dev/null; then
            log "quire did not stop in 30 s; SIGKILL"
            kill -KILL "$QUIRE_PID" 2>/dev/null || true
        fi
    fi
    wait "$QUIRE_PID" 2>/dev/null || true
    QUIRE_PID=""
}

stop_mariadb() {
    [[ -n $MARIADB_PID ]] || return 0
    if kill -0 "$MARIADB_PID" 2>/dev/null; then
        mariadb-admin --no-defaults -h127.0.0.1 -P"$MARIADB_PORT" -uroot shutdown 2>/dev/null ||
            kill -TERM "$MARIADB_PID" 2>/dev/null || true
        for _ in $(seq 1 600); do kill -0 "$MARIADB_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$MARIADB_PID" 2>/dev/null; then
            log "mariadbd did not stop in 60 s; SIGKILL"
            kill -KILL "$MARIADB_PID" 2>/dev/null || true
        fi
    fi
    wait "$MARIADB_PID" 2>/dev/null || true
    MARIADB_PID=""
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_quire
    stop_mariadb
    if [[ -n $WORK && -d $WORK ]]; then
        # Keep the server logs next to the sysbench logs before removing data.
        [[ -d $LOGDIR ]] && cp -f "$WORK"/*.err "$LOGDIR"/ 2>/dev/null || true
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers --
client() { # client <port> <sql...>
    local port=$1
    shift
    mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -N -B -e "$*"
}

wait_ready() { # wait_ready <name> <port> <pid> <logfile>
    local name=$1 port=$2 pid=$3 logf=$4
    for _ in $(seq 1 600); do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 30 "$logf" >&2 || true
            die "$name exited during start-up (log: $logf)"
        fi
        client "$port" 'select 1' >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    tail -n 30 "$logf" >&2 || true
    die "$name did not accept connections on 127.0.0.1:$port within 60 s"
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_quire() { # start_quire <trx_commit> <sync_binlog>
    local dir="$WORK/quire" logf="$WORK/quire.err"
    rm -rf "$dir"
    port_free "$QUIRE_PORT" || die "port $QUIRE_PORT is in use (set QUIRE_PORT)"
    # shellcheck disable=SC2086  # QUIRE_EXTRA is a list of words
    "$WORK/quire-bin" serve --datadir="$dir" --port="$QUIRE_PORT" --bind-address=127.0.0.1 \
        --max-connections=300 --innodb-buffer-pool-size="$BUFFER_POOL" --log-bin=ON \
        --innodb-flush-log-at-trx-commit="$1" --sync-binlog="$2" $QUIRE_EXTRA \
        >>"$logf" 2>&1 &
    QUIRE_PID=$!
    wait_ready quire "$QUIRE_PORT" "$QUIRE_PID" "$logf"
}

start_mariadb() { # start_mariadb <trx_commit> <sync_binlog>
    local dir="$WORK/mariadb" logf="$WORK/mariadb.err"
    rm -rf "$dir"
    mkdir -p "$dir"
    port_free "$MARIADB_PORT" || die "port $MARIADB_PORT is in use (set MARIADB_PORT)"
    mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$dir" \
        --auth-root-authentication-method=normal --skip-test-db \
        >>"$WORK/mariadb-install.log" 2>&1 ||
        { tail -n 30 "$WORK/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
    # shellcheck disable=SC2086  # MARIADB_EXTRA is a list of words
    mariadbd --no-defaults --user="$(id -un)" --datadir="$dir" \
        --socket="$WORK/mariadb.sock" --pid-file="$WORK/mariadb.pid" \
        --port="$MARIADB_PORT" --bind-address=127.0.0.1 --log-error="$logf" \
        --max-connections=300 --innodb-buffer-pool-size="$BUFFER_POOL" \
        --log-bin="$dir/binlog" --server-id=1 \
        --innodb-flush-log-at-trx-commit="$1" --sync-binlog="$2" $MARIADB_EXTRA \
        >>"$logf" 2>&1 &
    MARIADB_PID=$!
    wait_ready mariadb "$MARIADB_PORT" "$MARIADB_PID" "$logf"
}

# Print the settings each server actually runs with; fail if a knob did not apply.
check_settings() { # check_settings <name> <port> <trx_commit> <sync_binlog>
    local name=$1 port=$2 got
    got=$(client "$port" 'select @@innodb_flush_log_at_trx_commit, @@sync_binlog, @@log_bin, @@innodb_buffer_pool_size, @@max_connections' | tr '\t' ' ')
    log "$name: trx_commit sync_binlog log_bin buffer_pool max_connections = $got"
    read -r t s b _ _ <<<"$got"
    [[ $t == "$3" && $s == "$4" && ($b == 1 || $b == ON) ]] ||
        die "$name runs with trx_commit=$t sync_binlog=$s log_bin=$b, wanted $3/$4/ON"
    # Informational: the defaults that differ between the two and matter for writes.
    local v
    for v in innodb_flush_method innodb_doublewrite binlog_format innodb_log_file_size innodb_redo_log_capacity innodb_io_capacity; do
        got=$(client "$port" "select @@$v" 2>/dev/null || echo n/a)
        log "$name: $v = $got"
    done
}

# ---------------------------------------------------------------- sysbench --
ROWS=()

# parse_run <logfile>: prints "tps avg_ms p99_ms errors_per_s"
parse_run() {
    awk '
        /transactions:/     { gsub(/[()]/, "", $3); tps = $3 }
        /ignored errors:/   { gsub(/[()]/, "", $4); err = $4 }
        /^ *avg:/           { avg = $2 }
        /99th percentile:/  { p99 = $3 }
        END {
            if (tps == "" || avg == "" || p99 == "") exit 1
            printf "%s %s %s %s\n", tps, avg, p99, (err == "" ? "?" : err)
        }' "$1"
}

run_one() { # run_one <target> <port> <workload> <threads> <setting-label>
    local target=$1 port=$2 w=$3 th=$4 label=$5
    local tag="${target}_${w}_${label/\//-}_t${th}"
    local sb=(sysbench "$w" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port"
        --mysql-user=root --mysql-password= --mysql-db=sbtest --tables="$TABLES"
        --table-size="$TABLE_SIZE" --db-ps-mode="$PS_MODE")
    local result="FAIL FAIL FAIL FAIL" status=ok tps avg p99 err note

    client "$port" 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest' \
        >"$LOGDIR/$tag.db.log" 2>&1 || status="create database failed"
    if [[ $status == ok ]]; then
        "${sb[@]}" --threads="$TABLES" prepare >"$LOGDIR/$tag.prepare.log" 2>&1 ||
            status="prepare failed"
    fi
    if [[ $status == ok ]]; then
        log "$target $w $label threads=$th: run ${SECONDS_PER_RUN}s"
        if "${sb[@]}" --threads="$th" --time="$SECONDS_PER_RUN" --report-interval=0 \
            --percentile=99 run >"$LOGDIR/$tag.run.log" 2>&1; then
            result=$(parse_run "$LOGDIR/$tag.run.log") || { result="FAIL FAIL FAIL FAIL"; status="unparsable run output"; }
        else
            status="run failed"
        fi
    fi
    "${sb[@]}" cleanup >"$LOGDIR/$tag.cleanup.log" 2>&1 ||
        { [[ $status == ok ]] && status="cleanup failed"; }
    if [[ $status != ok ]]; then
        log "$target $w $label threads=$th: $status; logs: $LOGDIR/$tag.*.log"
        grep -h -m3 -E 'FATAL|ERROR|error' "$LOGDIR/$tag".*.log >&2 || true
        # Keep the numbers if only cleanup failed, but mark it.
        [[ $status == "cleanup failed" ]] && result="$result cleanup-failed"
    fi
    read -r tps avg p99 err note <<<"$result"
    log "$target $w $label threads=$th: tps=$tps avg=${avg}ms p99=${p99}ms errors/s=$err"
    ROWS+=("$target|$w|$label|$th|$tps|$avg|$p99|$err${note:+ ($note)}")
}

print_table() {
    local fmt="%-8s %-22s %-9s %7s %11s %9s %9s %10s\n"
    # shellcheck disable=SC2059
    printf "$fmt" target workload setting threads TPS avg_ms p99_ms errors/s
    local r
    for r in "${ROWS[@]}"; do
        IFS='|' read -r a b c d e f g h <<<"$r"
        # shellcheck disable=SC2059
        printf "$fmt" "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
    done
}

# Ratios quire/MariaDB for each (workload, setting, threads) where both succeeded.
print_ratios() {
    local r q m
    printf "%-22s %-9s %7s %14s %14s\n" workload setting threads "TPS q/m" "P99 q/m"
    for q in "${ROWS[@]}"; do
        IFS='|' read -r a b c d e _ g _ <<<"$q"
        [[ $a == quire ]] || continue
        for m in "${ROWS[@]}"; do
            IFS='|' read -r a2 b2 c2 d2 e2 _ g2 _ <<<"$m"
            [[ $a2 == mariadb && $b2 == "$b" && $c2 == "$c" && $d2 == "$d" ]] || continue
            r=$(awk -v qt="$e" -v mt="$e2" -v qp="$g" -v mp="$g2" 'BEGIN {
                t = (qt + 0 > 0 && mt + 0 > 0) ? sprintf("%.2f", qt / mt) : "n/a"
                p = (qp + 0 > 0 && mp + 0 > 0) ? sprintf("%.2f", qp / mp) : "n/a"
                print t, p }')
            read -r rt rp <<<"$r"
            printf "%-22s %-9s %7s %14s %14s\n" "$b" "$c" "$d" "$rt" "$rp"
        done
    done
}

# ---------------------------------------------------------------- main --
main() {
    install_packages
    command -v cargo >/dev/null || die "cargo not found (install the Rust toolchain)"
    mkdir -p "$RESULTS_DIR" "$LOGDIR" "$WORKDIR_PARENT"
    WORK=$(mktemp -d "$WORKDIR_PARENT/quire-vs-mariadb.XXXXXX")

    if [[ $SKIP_BUILD != 1 ]]; then
        log "cargo build --release"
        (cd "$REPO" && cargo build --release -q) || die "cargo build --release failed"
    fi
    [[ -x $REPO/target/release/quire ]] || die "no $REPO/target/release/quire"
    cp "$REPO/target/release/quire" "$WORK/quire-bin"

    local host_info
    host_info="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), workdir $WORK ($(df -T "$WORK" | awk 'NR==2 {print $2}'))"
    log "quire $(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?'); $(mariadbd --version | awk '{print $1, $2, $3}'); $(sysbench --version)"
    log "host: $host_info"

    local setting trx sync label w th
    IFS=',' read -r -a setting_list <<<"$SETTINGS"
    for setting in "${setting_list[@]}"; do
        read -r trx sync <<<"$setting"
        [[ $trx =~ ^[012]$ && $sync =~ ^[0-9]+$ ]] || die "bad setting '$setting' (want e.g. \"1 1\")"
        label="$trx/$sync"
        log "=== setting innodb_flush_log_at_trx_commit=$trx sync_binlog=$sync"
        start_quire "$trx" "$sync"
        start_mariadb "$trx" "$sync"
        check_settings quire "$QUIRE_PORT" "$trx" "$sync"
        check_settings mariadb "$MARIADB_PORT" "$trx" "$sync"
        for w in $WORKLOADS; do
            for th in $THREADS; do
                run_one quire "$QUIRE_PORT" "$w" "$th" "$label"
                run_one mariadb "$MARIADB_PORT" "$w" "$th" "$label"
            done
        done
        stop_quire
        stop_mariadb
    done

    {
        echo "# sysbench: quire vs MariaDB; $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "# quire $(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?'); $(mariadbd --version | awk '{print $1, $2, $3}'); $(sysbench --version)"
        echo "# host: $host_info"
        echo "# tables=$TABLES table_size=$TABLE_SIZE time=${SECONDS_PER_RUN}s ps_mode=$PS_MODE buffer_pool=$BUFFER_POOL log_bin=ON max_connections=300"
        echo "# setting = innodb_flush_log_at_trx_commit/sync_binlog; errors/s = sysbench 'ignored errors' per second"
        [[ -n $QUIRE_EXTRA ]] && echo "# quire extra: $QUIRE_EXTRA"
        [[ -n $MARIADB_EXTRA ]] && echo "# mariadb extra: $MARIADB_EXTRA"
        echo
        print_table
        echo
        echo "# quire / MariaDB ratios (TPS > 1 and P99 < 1 favour quire)"
        print_ratios
        echo
        echo "# sysbench logs: $LOGDIR"
    } >"$OUT"
    echo
    cat "$OUT"
    echo
    echo "table written to $OUT"
}

main "$@"
