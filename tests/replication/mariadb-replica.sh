#!/usr/bin/env bash
# A MariaDB 10.11 replica and `mariadb-binlog --read-from-remote-server
# --stop-never` follow `quire serve` (issue 13), by binary log file and
# position:
#
#   1. quire serve (log_bin=ON) and a replication account
#      (mysql_native_password: MariaDB has no caching_sha2_password);
#   2. a private mariadbd (server_id 2, utf8mb4 as Debian configures it:
#      its I/O thread repeats SET NAMES <server charset> when it
#      reconnects, and quire exchanges utf8mb4 only) replicating from
#      binlog.000001:4, and mariadb-binlog following the log live;
#   3. sysbench prepare (CREATE TABLE, CREATE INDEX, INSERTs) and
#      oltp_write_only at THREADS threads for SECONDS, a FLUSH BINARY LOGS
#      in the middle (a rotation while the replica reads);
#   4. kill -9 of quire, restart, more writes (binlog_row_image=MINIMAL):
#      the replica reconnects;
#   5. python-mysql-replication (cdc.py) receives every row change of a
#      workload with column names (binlog_row_metadata=FULL);
#   6. mariadb-binlog printed every row change before the kill (inserts
#      minus deletes = the rows in the tables); every table on the replica
#      equals quire's (all rows, ordered) and its I/O and SQL threads run;
#   7. PURGE BINARY LOGS under a live replica, mariadb-binlog on the active
#      file, a second dump for one server_id, semi-synchronous replication
#      with its timeout fallback, and GTID auto-positioning (gtid.py).
#
# Usage: tests/replication/mariadb-replica.sh QUIRE_BIN [SECONDS] [THREADS]
set -euo pipefail
q=${1:?quire binary}
secs=${2:-10}
threads=${3:-16}
dir=$(mktemp -d)
qport=$((34000 + RANDOM % 1000))
rport=$((qport + 1000))
qsrv=""
rsrv=""
follow=""
cleanup() {
  [ -n "$follow" ] && kill "$follow" 2>/dev/null || true
  [ -n "$rsrv" ] && kill "$rsrv" 2>/dev/null || true
  [ -n "$qsrv" ] && kill "$qsrv" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "replication test: $*"
  echo "--- replica status"; rcli -e "SHOW SLAVE STATUS\G" 2>&1 | grep -E "Running|Error|Pos|File" || true
  echo "--- replica error log"; tail -20 "$dir/replica.err" || true
  echo "--- quire log"; tail -20 "$dir/quire.log" || true
  exit 1
}
qcli() { mariadb -h127.0.0.1 -P$qport -uroot "$@"; }
rcli() { mariadb -S "$dir/replica.sock" -uroot "$@"; }
start_quire() {
  $q serve --datadir="$dir/q" --port=$qport --log-bin=ON --max-connections=300 >>"$dir/quire.log" 2>&1 &
  qsrv=$!
  for _ in $(seq 1 200); do qcli -e "select 1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "quire serve did not start"
}

need_py() { # module pip-requirement
  if ! python3 -c "import $1" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check "$2" ||
      python3 -m pip install --quiet --disable-pip-version-check --user "$2" ||
      python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$2"
  fi
  python3 -c "import $1"
}
need_py pymysql pymysql
need_py pymysqlreplication mysql-replication

start_quire
qcli -e "CREATE USER repl@'%' IDENTIFIED WITH mysql_native_password BY 'rpw';
         GRANT REPLICATION SLAVE ON *.* TO repl@'%'; CREATE DATABASE sbtest"

mariadb-install-db --no-defaults --datadir="$dir/replica" --user=root >"$dir/install.log" 2>&1 \
  || { cat "$dir/install.log"; fail "mariadb-install-db failed"; }
mariadbd --no-defaults --datadir="$dir/replica" --port=$rport --socket="$dir/replica.sock" \
  --user=root --server-id=2 --skip-grant-tables --relay-log="$dir/relay" \
  --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
  --log-error="$dir/replica.err" &
rsrv=$!
for _ in $(seq 1 200); do rcli -e "select 1" >/dev/null 2>&1 && break; sleep 0.1; done
rcli -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$qport, MASTER_USER='repl',
         MASTER_PASSWORD='rpw', MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4,
         MASTER_USE_GTID=no, MASTER_CONNECT_RETRY=1; START SLAVE"

mariadb-binlog --read-from-remote-server --stop-never -h127.0.0.1 -P$qport -urepl -prpw \
  --default-auth=mysql_native_password -v binlog.000001 >"$dir/follow.out" 2>"$dir/follow.err" &
follow=$!

sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$qport --mysql-user=root
    --mysql-db=sbtest --tables=4 --table-size=2000"
$sb oltp_write_only prepare >"$dir/sb.log" 2>&1 || { cat "$dir/sb.log"; fail "sysbench prepare failed"; }
$sb --threads=$threads --time=$secs oltp_write_only run >"$dir/sb-run.log" 2>&1 &
sbpid=$!
sleep $((secs / 2))
qcli -e "FLUSH BINARY LOGS"
wait $sbpid || { cat "$dir/sb-run.log"; fail "sysbench run failed"; }
echo "source: $(grep -E 'transactions:' "$dir/sb-run.log" | xargs)"

# mariadb-binlog followed live: it reaches the source's position (in the
# file after the rotation) and printed every row change so far (sysbench
# keeps each table at 2000 rows: inserts minus deletes = 4 x 2000).
read -r qfile qpos < <(qcli -N -e "SHOW MASTER STATUS" | awk '{print $1, $2}')
for _ in $(seq 1 150); do
  grep -q "Rotate to $qfile" "$dir/follow.out" && grep -q "end_log_pos $qpos " "$dir/follow.out" && break
  sleep 0.2
done
grep -q "end_log_pos $qpos " "$dir/follow.out" || fail "mariadb-binlog --stop-never did not reach $qfile:$qpos ($(tail -3 "$dir/follow.err"))"
ins=$(grep -c '^### INSERT INTO `sbtest`' "$dir/follow.out" || true)
del=$(grep -c '^### DELETE FROM `sbtest`' "$dir/follow.out" || true)
upd=$(grep -c '^### UPDATE `sbtest`' "$dir/follow.out" || true)
[ "$((ins - del))" = 8000 ] || fail "mariadb-binlog --stop-never saw $ins inserts and $del deletes, the tables hold 8000 rows ($(tail -3 "$dir/follow.err"))"
[ "$upd" -gt 0 ] || fail "mariadb-binlog --stop-never saw no updates"
kill $follow 2>/dev/null || true; wait $follow 2>/dev/null || true; follow=""
echo "mariadb-binlog --stop-never: $ins inserts, $upd updates, $del deletes followed live"

# A CDC client (python-mysql-replication) receives every row change of a
# workload with column names (binlog_row_metadata=FULL).
python3 "$(dirname "$0")/cdc.py" --port $qport --ops 300 || fail "the CDC client did not see every change"

# kill -9 of the source, restart, more writes.
kill -9 $qsrv; wait $qsrv 2>/dev/null || true
start_quire
# After the restart, minimal row images (the key before, the changed
# columns after): the replica applies them as MySQL's.
qcli -e "SET GLOBAL binlog_row_image = MINIMAL"
$sb --threads=4 --time=3 oltp_write_only run >"$dir/sb-run2.log" 2>&1 || { cat "$dir/sb-run2.log"; fail "sysbench after restart failed"; }

# Caught up: the replica executed everything up to quire's position.
read -r qfile qpos < <(qcli -N -e "SHOW MASTER STATUS" | awk '{print $1, $2}')
for _ in $(seq 1 300); do
  st=$(rcli -e "SHOW SLAVE STATUS\G")
  rfile=$(echo "$st" | awk '/ Relay_Master_Log_File:/ {print $2}')
  rpos=$(echo "$st" | awk '/ Exec_Master_Log_Pos:/ {print $2}')
  [ "$rfile" = "$qfile" ] && [ "$rpos" = "$qpos" ] && break
  echo "$st" | grep -qE "Slave_SQL_Running: No" && fail "replica SQL thread stopped"
  sleep 0.2
done
[ "$rfile" = "$qfile" ] && [ "$rpos" = "$qpos" ] || fail "replica at $rfile:$rpos, source at $qfile:$qpos"
rcli -e "SHOW SLAVE STATUS\G" | grep -q "Slave_IO_Running: Yes" || fail "replica I/O thread not running"
qcli -N -e "SHOW REPLICAS" | awk '{print $1}' | grep -qx 2 || fail "SHOW REPLICAS on quire does not list the replica (server_id 2)"

for t in 1 2 3 4; do
  a=$(qcli -N -e "SELECT id, k, c, pad FROM sbtest.sbtest$t ORDER BY id" | md5sum)
  b=$(rcli -N -e "SELECT id, k, c, pad FROM sbtest.sbtest$t ORDER BY id" | md5sum)
  [ "$a" = "$b" ] || fail "sbtest$t differs between quire and the replica"
done
a=$(qcli -N -e "SELECT * FROM cdc.items ORDER BY id" | md5sum)
b=$(rcli -N -e "SELECT * FROM cdc.items ORDER BY id" | md5sum)
[ "$a" = "$b" ] || fail "cdc.items (DECIMAL, DATETIME, ENUM, TEXT) differs between quire and the replica"
echo "MariaDB replica: caught up at $qfile:$qpos after a rotation and a kill -9 of the source; 5 tables equal"

# PURGE BINARY LOGS while the replica reads the active file: every older
# file goes, the replica goes on (and a dump from a purged file is 1236).
qcli -e "PURGE BINARY LOGS TO '$qfile'"
[ "$(qcli -N -e "SHOW BINARY LOGS" | awk '{print $1}')" = "$qfile" ] || fail "PURGE BINARY LOGS TO '$qfile' left $(qcli -N -e "SHOW BINARY LOGS" | wc -l) files"
qcli -e "CREATE DATABASE purged; CREATE TABLE purged.t (id INT PRIMARY KEY); INSERT INTO purged.t VALUES (1), (2), (3)"
for _ in $(seq 1 100); do
  [ "$(rcli -N -e "SELECT COUNT(*) FROM purged.t" 2>/dev/null)" = 3 ] && break
  sleep 0.1
done
[ "$(rcli -N -e "SELECT COUNT(*) FROM purged.t" 2>/dev/null)" = 3 ] || fail "the replica stopped following after PURGE BINARY LOGS"
if mariadb-binlog --read-from-remote-server -h127.0.0.1 -P$qport -urepl -prpw \
     --default-auth=mysql_native_password binlog.000001 >/dev/null 2>"$dir/purged.err"; then
  fail "a dump from a purged file was not refused"
fi
grep -q "Could not find first log file name" "$dir/purged.err" || fail "a dump from a purged file: $(cat "$dir/purged.err")"
echo "PURGE BINARY LOGS TO $qfile: older files gone, the replica follows on"

# The active file, read locally while quire writes it: events to its end
# (the preallocated tail is placeholder events, not zeros).
mariadb-binlog -v "$dir/q/$qfile" >"$dir/local.out" 2>"$dir/local.err" \
  || fail "mariadb-binlog cannot read the active file $qfile: $(tail -3 "$dir/local.err")"
grep -q '^### INSERT INTO `purged`.`t`' "$dir/local.out" || fail "mariadb-binlog read the active file but not its last rows"
echo "mariadb-binlog reads the active file $qfile to its end"

# A dump for a replica server_id that is already being streamed to ends the
# older one (MySQL's kill_zombie_dump_threads): a replica that reconnects
# after a network cut never leaves a dump thread holding a connection.
mariadb-binlog --read-from-remote-server --stop-never --stop-never-slave-server-id=77 \
  -h127.0.0.1 -P$qport -urepl -prpw --default-auth=mysql_native_password "$qfile" >/dev/null 2>&1 &
old=$!
sleep 1
kill -0 $old 2>/dev/null || fail "the first dump for server_id 77 ended by itself"
mariadb-binlog --read-from-remote-server --stop-never --stop-never-slave-server-id=77 \
  -h127.0.0.1 -P$qport -urepl -prpw --default-auth=mysql_native_password "$qfile" >/dev/null 2>&1 &
new=$!
for _ in $(seq 1 50); do kill -0 $old 2>/dev/null || break; sleep 0.1; done
kill -0 $old 2>/dev/null && fail "a second dump for server_id 77 did not end the first"
kill $new 2>/dev/null || true; wait $new 2>/dev/null || true
echo "a second dump for the same replica server_id ended the first"

# Semi-synchronous replication (AFTER_SYNC): the MariaDB replica turns
# semi-sync on and reconnects; commits then return once it has them
# (Rpl_semi_sync_master_yes_tx); with its I/O thread stopped a commit waits
# the timeout and the source goes on asynchronously (status OFF, no_tx);
# once it reconnects and catches up, semi-sync is back.
qstat() { qcli -N -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'; }
qcli -e "SET GLOBAL rpl_semi_sync_master_enabled = ON; SET GLOBAL rpl_semi_sync_master_timeout = 2000"
rcli -e "SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD"
for _ in $(seq 1 100); do [ "$(qstat Rpl_semi_sync_master_clients)" = 1 ] && break; sleep 0.1; done
[ "$(qstat Rpl_semi_sync_master_clients)" = 1 ] || fail "the semi-sync replica did not attach (Rpl_semi_sync_master_clients $(qstat Rpl_semi_sync_master_clients))"
yes0=$(qstat Rpl_semi_sync_master_yes_tx)
qcli -e "CREATE TABLE purged.ss (id INT PRIMARY KEY)"
for i in 1 2 3 4 5; do qcli -e "INSERT INTO purged.ss VALUES ($i)"; done
yes1=$(qstat Rpl_semi_sync_master_yes_tx)
[ "$yes1" -ge $((yes0 + 6)) ] || fail "semi-sync: yes_tx went from $yes0 to $yes1 over 6 commits"
[ "$(rcli -N -e "SELECT COUNT(*) FROM purged.ss")" = 5 ] || fail "semi-sync: acknowledged commits missing on the replica"
rcli -e "STOP SLAVE IO_THREAD"
sleep 0.5
t0=$(date +%s%N)
qcli -e "INSERT INTO purged.ss VALUES (6)"
waited_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(qstat Rpl_semi_sync_master_no_times)" -ge 1 ] || fail "semi-sync: a commit without the replica did not wait for the timeout"
[ "$(qstat Rpl_semi_sync_master_status)" = 0 ] || fail "semi-sync: status still ON after the timeout"
rcli -e "START SLAVE IO_THREAD"
for _ in $(seq 1 100); do [ "$(rcli -N -e "SELECT COUNT(*) FROM purged.ss")" = 6 ] && break; sleep 0.1; done
qcli -e "INSERT INTO purged.ss VALUES (7)"
[ "$(qstat Rpl_semi_sync_master_status)" = 1 ] || fail "semi-sync: status not back ON after the replica caught up"
echo "semi-sync: $((yes1 - yes0)) commits acknowledged by the replica; without it one waited ${waited_ms} ms and the source went asynchronous, then semi-sync again"
qcli -e "SET GLOBAL rpl_semi_sync_master_enabled = OFF"

# GTIDs: gtid_mode stepped up to ON, then auto-positioning clients
# (COM_BINLOG_DUMP_GTID, python-mysql-replication) get exactly the
# transactions they lack, and are refused when purged files held some.
# (The MariaDB replica follows by file and position: stopped first, as
# the test resets the log.)
rcli -e "STOP SLAVE"
python3 "$(dirname "$0")/gtid.py" --port $qport || fail "GTID auto-positioning failed"
