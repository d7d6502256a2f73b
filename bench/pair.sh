# Sourced by the *-vs-mariadb.sh benchmarks: quire serve and a private
# MariaDB 10.11 side by side, both at innodb_flush_log_at_trx_commit=1 /
# sync_binlog=1 with the binary log on, in a temporary work directory that
# is removed (servers stopped) on exit.
#
#   start_pair QUIRE_BIN "quire serve args" "mariadbd args"
#
# sets $work, $qport and $mport, and returns once both answer.

work=$(mktemp -d)
qport=$((34000 + RANDOM % 1000))
mport=$((35000 + RANDOM % 1000))
cleanup() {
  [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null || true
  [ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start_pair() {
  local q=$1 qargs=$2 margs=$3
  # shellcheck disable=SC2086 # the argument strings are word lists
  $q serve --datadir="$work/q" --port=$qport $qargs >"$work/q.log" 2>&1 &
  qpid=$!
  mariadb-install-db --no-defaults --datadir="$work/m" --user=root >/dev/null 2>&1
  # shellcheck disable=SC2086
  mariadbd --no-defaults --datadir="$work/m" --port=$mport --socket="$work/m.sock" --user=root \
    --skip-grant-tables --innodb-flush-log-at-trx-commit=1 --sync-binlog=1 \
    --log-bin="$work/m/binlog" --server-id=1 $margs >"$work/m.log" 2>&1 &
  mpid=$!
  for _ in $(seq 1 200); do
    mariadb -h127.0.0.1 -P$qport -uroot -e "select 1" >/dev/null 2>&1 &&
      mariadb -h127.0.0.1 -P$mport -uroot -e "select 1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "servers did not answer; see $work/q.log and $work/m.log" >&2
  return 1
}
