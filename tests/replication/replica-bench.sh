#!/usr/bin/env bash
# What replicas cost the source (issue 13's benchmark): sysbench
# oltp_write_only on `quire serve` with no replica, with two MariaDB 10.11
# replicas connected (asynchronous), and with both semi-synchronous
# (AFTER_SYNC, loopback), and with two bare dump readers
# (`mariadb-binlog --raw --stop-never`: the source's side of replication
# without a replica's apply work competing for the same 2 cores). The
# replicas apply with innodb_flush_log_at_trx_commit=2 so that their fsyncs
# do not queue behind quire's on the one disk. Runs alternate (none, 2
# readers, 2 async, semi-sync, none, 2 async, 2 readers) because this
# machine is shared and noisy: compare ratios of
# runs made minutes apart, not absolute figures. It prints each run (TPS,
# P95/P99 latency), the ratios, how long the replicas took to catch up
# after the last run and so their apply rate against the source's commit
# rate. The replicas run on the same 2 cores as quire and sysbench, so the
# figures include the CPU they take.
#
# Usage: tests/replication/replica-bench.sh QUIRE_BIN [SECONDS] [THREADS]
set -euo pipefail
q=${1:?quire binary}
secs=${2:-15}
threads=${3:-16}
dir=$(mktemp -d)
qport=$((36000 + RANDOM % 1000))
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
die() { echo "replica-bench: $*" >&2; exit 1; }

qcli() { mariadb -h127.0.0.1 -P"$qport" -uroot "$@"; }
rcli() { local n=$1; shift; mariadb -S "$dir/r$n.sock" -uroot "$@"; }
qstat() { qcli -N -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'; }

"$q" serve --datadir="$dir/q" --port="$qport" --log-bin=ON --max-connections=300 >"$dir/quire.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do qcli -e "select 1" >/dev/null 2>&1 && break; sleep 0.1; done
qcli -e "CREATE USER repl@'%' IDENTIFIED WITH mysql_native_password BY 'rpw';
         GRANT REPLICATION SLAVE ON *.* TO repl@'%'; CREATE DATABASE sbtest"
sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$qport --mysql-user=root
    --mysql-db=sbtest --tables=4 --table-size=10000"
$sb oltp_write_only prepare >"$dir/prepare.log" 2>&1 || { cat "$dir/prepare.log"; die "prepare failed"; }

start_replica() { # n (server_id n+1)
  local n=$1
  mariadb-install-db --no-defaults --datadir="$dir/r$n" --user=root >/dev/null 2>&1
  mariadbd --no-defaults --datadir="$dir/r$n" --port=$((qport + 10 + n)) --socket="$dir/r$n.sock" \
    --user=root --server-id=$((n + 1)) --skip-grant-tables --relay-log="$dir/r$n-relay" \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    --innodb-flush-log-at-trx-commit=2 --log-error="$dir/r$n.err" &
  pids+=($!)
  for _ in $(seq 1 200); do rcli "$n" -e "select 1" >/dev/null 2>&1 && break; sleep 0.1; done
  rcli "$n" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$qport, MASTER_USER='repl',
       MASTER_PASSWORD='rpw', MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4,
       MASTER_USE_GTID=no, MASTER_CONNECT_RETRY=1; START SLAVE"
}

# Seconds until every replica has executed up to the source's position.
catch_up() {
  local qfile qpos t0 n st
  read -r qfile qpos < <(qcli -N -e "SHOW MASTER STATUS" | awk '{print $1, $2}')
  t0=$(date +%s%N)
  for n in 1 2; do
    for _ in $(seq 1 3000); do
      st=$(rcli "$n" -e "SHOW SLAVE STATUS\G")
      [ "$(echo "$st" | awk '/ Relay_Master_Log_File:/ {print $2}')" = "$qfile" ] &&
        [ "$(echo "$st" | awk '/ Exec_Master_Log_Pos:/ {print $2}')" = "$qpos" ] && break
      sleep 0.1
    done
  done
  echo "scale=1; ($(date +%s%N) - $t0) / 1000000000" | bc
}

declare -A tps
run() { # label
  $sb --threads="$threads" --time="$secs" --percentile=99 --report-interval=0 oltp_write_only run \
    >"$dir/run.log" 2>&1 || { cat "$dir/run.log"; die "run $1 failed"; }
  local t p95 p99
  t=$(awk '/transactions:/ {gsub(/\(/, "", $3); print $3}' "$dir/run.log")
  p99=$(awk '/99th percentile:/ {print $3}' "$dir/run.log")
  p95=$(awk '/avg:/ {print $2}' "$dir/run.log")
  tps[$1]="${tps[$1]:-} $t"
  printf '%-10s tps=%-9s p99_ms=%-7s avg_ms=%s\n' "$1" "$t" "$p99" "$p95"
}

mean() { echo "$1" | awk '{s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF}'; }

readers=()
start_readers() {
  for n in 1 2; do
    mariadb-binlog --read-from-remote-server --raw --stop-never --stop-never-slave-server-id=$((90 + n)) \
      --result-file="$dir/raw$n-" -h127.0.0.1 -P"$qport" -urepl -prpw \
      --default-auth=mysql_native_password binlog.000001 >/dev/null 2>"$dir/raw$n.err" &
    readers+=($!)
    pids+=($!)
  done
  sleep 1
}
stop_readers() {
  for p in "${readers[@]}"; do kill "$p" 2>/dev/null || true; done
  readers=()
}

echo "oltp_write_only, 4 tables x 10000 rows, $threads threads, $secs s per run"
run none
start_readers
run readers2
stop_readers
start_replica 1
start_replica 2
echo "replicas caught up with the prepare in $(catch_up) s"
run async2
qcli -e "SET GLOBAL rpl_semi_sync_master_enabled = ON; SET GLOBAL rpl_semi_sync_master_timeout = 10000"
for n in 1 2; do
  rcli "$n" -e "SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD"
done
for _ in $(seq 1 100); do [ "$(qstat Rpl_semi_sync_master_clients)" = 2 ] && break; sleep 0.1; done
[ "$(qstat Rpl_semi_sync_master_clients)" = 2 ] || die "the replicas did not attach as semi-sync"
yes0=$(qstat Rpl_semi_sync_master_yes_tx)
run semisync
echo "  semi-sync: $(( $(qstat Rpl_semi_sync_master_yes_tx) - yes0 )) transactions acknowledged, no_tx=$(qstat Rpl_semi_sync_master_no_tx), avg wait $(qstat Rpl_semi_sync_master_tx_avg_wait_time) us"
qcli -e "SET GLOBAL rpl_semi_sync_master_enabled = OFF"
echo "replicas caught up in $(catch_up) s"
for n in 1 2; do rcli "$n" -e "STOP SLAVE"; done
run none
for n in 1 2; do rcli "$n" -e "START SLAVE"; done
echo "replicas caught up with the unreplicated run in $(catch_up) s"
c0=$(qstat Binlog_commits)
run async2
c1=$(qstat Binlog_commits)
lag=$(catch_up)
echo "after the last run the replicas needed $lag s more: apply rate $(echo "scale=0; ($c1 - $c0) / ($secs + $lag)" | bc) trx/s against the source's $(echo "scale=0; ($c1 - $c0) / $secs" | bc) trx/s"
for n in 1 2; do rcli "$n" -e "STOP SLAVE"; done
start_readers
run readers2
stop_readers
a=$(mean "${tps[none]}")
r=$(mean "${tps[readers2]}")
b=$(mean "${tps[async2]}")
c=$(mean "${tps[semisync]}")
echo "mean tps: none=$a readers2=$r async2=$b semisync=$c"
echo "ratio tps(2 dump readers)/tps(none) = $(echo "scale=3; $r / $a" | bc)"
echo "ratio tps(2 async replicas)/tps(none) = $(echo "scale=3; $b / $a" | bc)"
echo "ratio tps(2 semi-sync replicas)/tps(none) = $(echo "scale=3; $c / $a" | bc)"
