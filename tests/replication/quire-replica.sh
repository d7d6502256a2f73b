#!/usr/bin/env bash
# A quire replica of quire (issue 13 item 5), judged by a model of what the
# source acknowledged:
#
#   1. a source (log_bin, server_id 1) and a replica (log_bin, server_id 2:
#      applied transactions go to its own binary log too);
#   2. CHANGE REPLICATION SOURCE TO / START REPLICA on the replica; sysbench
#      prepare on the source (DDL and rows travel);
#   3. sysbench oltp_write_only at THREADS threads for SECONDS, and beside
#      it a ledger client: each transaction inserts row n into
#      sbtest.ledger and adds 1 to sbtest.counter; n is recorded once the
#      COMMIT is acknowledged;
#   4. meanwhile the replica is killed with kill -9 KILLS times at random
#      moments and restarted (it resumes by itself: the channel is stored);
#      then the source once, while the ledger still writes;
#   5. afterwards the replica catches up to the source's position and:
#      every sbtest table is equal row by row; the ledger holds exactly the
#      rows the source holds, every acknowledged n among them; the counter
#      equals the ledger's row count (a transaction applied twice would
#      raise it, a skipped one lower it); SHOW REPLICA STATUS shows both
#      threads running and no error.
#   Printed: the largest Seconds_Behind_Source seen and the catch-up time.
#
# Usage: tests/replication/quire-replica.sh QUIRE_BIN [SECONDS] [THREADS] [KILLS]
set -euo pipefail
q=${1:?quire binary}
secs=${2:-12}
threads=${3:-16}
kills=${4:-20}
dir=$(mktemp -d)
sport=$((36000 + RANDOM % 1000))
rport=$((sport + 1000))
ssrv=""
rsrv=""
ledger=""
cleanup() {
  [ -n "$ledger" ] && kill "$ledger" 2>/dev/null || true
  [ -n "$rsrv" ] && kill "$rsrv" 2>/dev/null || true
  [ -n "$ssrv" ] && kill "$ssrv" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

scli() { mariadb -h127.0.0.1 -P$sport -uroot --skip-ssl "$@"; }
rcli() { mariadb -h127.0.0.1 -P$rport -uroot --skip-ssl "$@"; }
fail() {
  echo "quire replica test: $*"
  echo "--- replica status"; rcli -e "SHOW REPLICA STATUS\G" 2>&1 | grep -E "Running|Error|Pos|File" || true
  echo "--- replica log"; tail -20 "$dir/replica.log" || true
  echo "--- source log"; tail -20 "$dir/source.log" || true
  exit 1
}
wait_up() { # cli
  for _ in $(seq 1 300); do $1 -e "select 1" >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "$1: server did not start"
}
start_source() {
  $q serve --datadir="$dir/s" --port=$sport --log-bin=ON --server-id=1 \
    --max-connections=300 >>"$dir/source.log" 2>&1 &
  ssrv=$!
  wait_up scli
}
start_replica() {
  $q serve --datadir="$dir/r" --port=$rport --log-bin=ON --server-id=2 >>"$dir/replica.log" 2>&1 &
  rsrv=$!
  wait_up rcli
}

python3 -c "import pymysql" 2>/dev/null ||
  python3 -m pip install --quiet --disable-pip-version-check pymysql ||
  python3 -m pip install --quiet --disable-pip-version-check --break-system-packages pymysql

start_source
start_replica
scli -e "CREATE USER repl@'%' IDENTIFIED WITH mysql_native_password BY 'rpw';
         GRANT REPLICATION SLAVE ON *.* TO repl@'%'"
rcli -e "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=$sport,
         SOURCE_USER='repl', SOURCE_PASSWORD='rpw', SOURCE_CONNECT_RETRY=1;
         START REPLICA"
scli -e "CREATE DATABASE sbtest;
         CREATE TABLE sbtest.ledger (n INT PRIMARY KEY, at DATETIME(6), note VARCHAR(40));
         CREATE TABLE sbtest.counter (id INT PRIMARY KEY, c BIGINT NOT NULL);
         INSERT INTO sbtest.counter VALUES (1, 0)"

sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$sport --mysql-user=root
    --mysql-db=sbtest --tables=4 --table-size=2000 --mysql-ssl=off"
$sb oltp_write_only prepare >"$dir/sb.log" 2>&1 || { cat "$dir/sb.log"; fail "sysbench prepare failed"; }

# The ledger: n is written to acked.txt only after its COMMIT returned.
python3 - "$sport" "$dir/acked.txt" <<'EOF' &
import sys, time, pymysql
port, out = int(sys.argv[1]), sys.argv[2]
n = 0
f = open(out, "w")
conn = None
deadline = time.time() + 3600
while time.time() < deadline:
    try:
        if conn is None:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=False)
        cur = conn.cursor()
        n += 1
        cur.execute("INSERT INTO sbtest.ledger VALUES (%s, NOW(6), 'ledger')", (n,))
        cur.execute("UPDATE sbtest.counter SET c = c + 1 WHERE id = 1")
        conn.commit()
        f.write(f"{n}\n"); f.flush()
    except Exception:
        conn = None
        time.sleep(0.05)
        # n may or may not have committed: the next attempt uses n+1.
EOF
ledger=$!

$sb --threads=$threads --time=$secs oltp_write_only run >"$dir/sb-run.log" 2>&1 &
sbpid=$!
# Seconds_Behind_Source, sampled every 0.2 s while sysbench runs.
( while kill -0 $sbpid 2>/dev/null; do
    rcli -e "SHOW REPLICA STATUS\G" 2>/dev/null | awk '/Seconds_Behind_Source:/ {print $2}'
    sleep 0.2
  done >"$dir/behind.txt" ) &
sampler=$!
# kill -9 the replica KILLS times over the run, the source once midway.
gap_ms=$((secs * 1000 / (kills + 1)))
for i in $(seq 1 "$kills"); do
  sleep "$(awk -v g=$gap_ms -v r=$RANDOM 'BEGIN { printf "%.3f", (g * (0.5 + r / 32768)) / 1000 }')"
  kill -9 $rsrv; wait $rsrv 2>/dev/null || true
  start_replica
done
wait $sbpid || { cat "$dir/sb-run.log"; fail "sysbench run failed"; }
wait $sampler 2>/dev/null || true
max_behind=$( (grep -E "^[0-9]+$" "$dir/behind.txt" || true) | sort -n | tail -1)
samples=$(grep -cE '^[0-9]+$' "$dir/behind.txt" || true)
echo "source: $(grep -E 'transactions:' "$dir/sb-run.log" | xargs)"
# The source too, while the ledger writes: the replica reconnects after
# the source's recovery.
kill -9 $ssrv; wait $ssrv 2>/dev/null || true
start_source
sleep 1
kill $ledger 2>/dev/null || true; wait $ledger 2>/dev/null || true; ledger=""
acked=$(wc -l <"$dir/acked.txt")
[ "$acked" -gt 0 ] || fail "the ledger client committed nothing"

# Caught up: the replica executed everything up to the source's position.
read -r sfile spos < <(scli -N -e "SHOW MASTER STATUS" | awk '{print $1, $2}')
t0=$(date +%s.%N)
for _ in $(seq 1 600); do
  st=$(rcli -e "SHOW REPLICA STATUS\G")
  rfile=$(echo "$st" | awk '/ Relay_Source_Log_File:/ {print $2}')
  rpos=$(echo "$st" | awk '/ Exec_Source_Log_Pos:/ {print $2}')
  [ "$rfile" = "$sfile" ] && [ "$rpos" = "$spos" ] && break
  echo "$st" | grep -qE "Replica_SQL_Running: No" && fail "replica SQL thread stopped"
  sleep 0.1
done
[ "$rfile" = "$sfile" ] && [ "$rpos" = "$spos" ] || fail "replica at $rfile:$rpos, source at $sfile:$spos"
catchup=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
st=$(rcli -e "SHOW REPLICA STATUS\G")
echo "$st" | grep -q "Replica_IO_Running: Yes" || fail "replica I/O thread not running"
echo "$st" | grep -q "Replica_SQL_Running: Yes" || fail "replica SQL thread not running"
echo "$st" | grep -q "Last_SQL_Errno: 0" || fail "replica SQL error"

for t in sbtest1 sbtest2 sbtest3 sbtest4 ledger counter; do
  a=$(scli -N -e "SELECT * FROM sbtest.$t ORDER BY 1" | md5sum)
  b=$(rcli -N -e "SELECT * FROM sbtest.$t ORDER BY 1" | md5sum)
  [ "$a" = "$b" ] || fail "sbtest.$t differs between the source and the replica"
done
rows=$(rcli -N -e "SELECT COUNT(*) FROM sbtest.ledger")
c=$(rcli -N -e "SELECT c FROM sbtest.counter")
[ "$rows" = "$c" ] || fail "replica counter $c != ledger rows $rows (a transaction applied twice or skipped)"
rcli -N -e "SELECT n FROM sbtest.ledger ORDER BY n" >"$dir/replica-ledger.txt"
missing=$(comm -23 <(sort "$dir/acked.txt") <(sort "$dir/replica-ledger.txt") | wc -l)
[ "$missing" = 0 ] || fail "$missing acknowledged ledger rows are missing on the replica"
echo "quire replica: $kills kill -9 of the replica and 1 of the source; $acked acknowledged ledger commits, $rows ledger rows, all tables equal; largest Seconds_Behind_Source in $samples samples during the run ${max_behind:-none} s; caught up ${catchup} s after the run"
