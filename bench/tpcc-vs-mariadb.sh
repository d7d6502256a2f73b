#!/usr/bin/env bash
# tpcc-mysql (Percona-Lab, built from source against libmariadb) against
# quire serve and MariaDB 10.11 on this machine, in one run, at
# innodb_flush_log_at_trx_commit=1 / sync_binlog=1 with the binary log on.
#
#   TPCC_DIR=/path/to/tpcc-mysql bench/tpcc-vs-mariadb.sh [warehouses] [connections] [seconds]
#
# TPCC_DIR must hold tpcc_load, tpcc_start and create_table.sql (build with
# `make -C src LIBS="$(mysql_config --libs_r) -lrt -lm"` after
# `apt-get install libmariadb-dev libmariadb-dev-compat`). The schema's
# foreign keys (add_fkey_idx.sql) need ALTER TABLE and are not applied on
# either server, so both run the same schema.
# Prints each server's tpmC line and the 90th-percentile response times.
set -euo pipefail
cd "$(dirname "$0")/.."
WH=${1:-2}
CONN=${2:-16}
SECS=${3:-120}
T=${TPCC_DIR:?set TPCC_DIR}
Q=${QUIRE:-./target/release/quire}
. bench/pair.sh
# quire at its default redo capacity (100 MiB; MariaDB's default log is
# 96 MiB): the loader's 100,000-item transaction is a large transaction
# (crates/engine/src/bigtrx.rs).
start_pair "$Q" "--max-connections=200" "--innodb-buffer-pool-size=512M --max-connections=200"
for port in $qport $mport; do
  mariadb -h127.0.0.1 -P$port -uroot -e "CREATE DATABASE tpcc"
  mariadb -h127.0.0.1 -P$port -uroot tpcc <"$T/create_table.sql"
  start=$(date +%s)
  "$T/tpcc_load" -h 127.0.0.1 -P $port -d tpcc -u root -p "" -w "$WH" >"$work/load_$port.out" 2>&1 ||
    { echo "tpcc_load failed on port $port"; tail -20 "$work/load_$port.out"; exit 1; }
  echo "port $port: loaded $WH warehouses in $(( $(date +%s) - start )) s"
  # The secondary indexes of add_fkey_idx.sql (its FOREIGN KEY lines need
  # ALTER TABLE, issue 11).
  grep '^CREATE INDEX' "$T/add_fkey_idx.sql" | mariadb -h127.0.0.1 -P$port -uroot tpcc
done
for port in $qport $mport; do
  name=$([ $port = $qport ] && echo quire || echo mariadb)
  "$T/tpcc_start" -h 127.0.0.1 -P $port -d tpcc -u root -p "" -w "$WH" -c "$CONN" -r 10 -l "$SECS" \
    >"$work/run_$name.out" 2>&1 || { echo "tpcc_start failed on $name"; tail -30 "$work/run_$name.out"; exit 1; }
  echo "== $name"
  # Per-transaction success/late/retry/failure counts, the New-Order
  # response-time percentiles of the last intervals, errors, tpmC.
  sed -n '/<Raw Results>/,/<Raw Results2/p' "$work/run_$name.out" | grep -E '^ *\[[0-9]\]' || true
  grep -E '^ *[0-9]+, trx:' "$work/run_$name.out" | tail -3 || true
  echo "error lines: $(grep -ci 'error' "$work/run_$name.out" || true)"
  grep -A1 '<TpmC>' "$work/run_$name.out" | tail -1
done
