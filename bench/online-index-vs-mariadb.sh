#!/usr/bin/env bash
# ADD INDEX on a sysbench table while sysbench oltp_write_only writes that
# same table, on quire serve and MariaDB 10.11 in one run (issue 11: "ADD
# INDEX on 1,000,000 rows while sysbench writes at 16 threads costs those
# writes < 30% TPS"). Both servers: 1 GiB buffer pool, binlog on, 1/1.
#
#   bench/online-index-vs-mariadb.sh [rows] [threads]
#
# Knobs: SECS (sysbench run length, 40), AT (second of the run at which
# the ALTER starts, 10), QUIRE (binary, ./target/release/quire).
#
# Per server it prints the mean TPS of the seconds before the ALTER, of the
# seconds the build ran and of the seconds after it, the build's length,
# the TPS lost during the build in percent of the TPS before it, and the
# P99 latency of each phase's per-second reports; then quire's figures
# over MariaDB's. Each sysbench run's per-second report is kept in the
# work directory's *.sb files while the script runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
THREADS=${2:-16}
SECS=${SECS:-40}
AT=${AT:-10}
Q=${QUIRE:-./target/release/quire}
. bench/pair.sh
start_pair "$Q" "--innodb-buffer-pool-size=1G --max-connections=300" \
  "--innodb-buffer-pool-size=1G --max-connections=300"

sb() { # sb <port> <command> [args...]
  local port=$1 cmd=$2
  shift 2
  sysbench oltp_write_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
    --mysql-user=root --mysql-db=sbtest --tables=1 --table-size="$ROWS" "$@" "$cmd"
}

for port in $qport $mport; do
  mariadb -h127.0.0.1 -P"$port" -uroot -e "CREATE DATABASE sbtest"
  sb "$port" prepare >/dev/null
done

run_one() { # run_one <port> <name>: writes $work/<name>.sb and $work/<name>.alter
  local port=$1 name=$2
  local start
  start=$(date +%s.%N)
  sb "$port" run --threads="$THREADS" --time="$SECS" --report-interval=1 \
    --percentile=99 >"$work/$name.sb" 2>&1 &
  local pid=$!
  sleep "$AT"
  local t0 t1
  t0=$(date +%s.%N)
  mariadb -h127.0.0.1 -P"$port" -uroot -e "ALTER TABLE sbtest.sbtest1 ADD INDEX kc (c)"
  t1=$(date +%s.%N)
  wait "$pid"
  echo "$start $t0 $t1" >"$work/$name.alter"
}

run_one "$qport" quire
run_one "$mport" mariadb

python3 - "$work" <<'PY'
import re, sys

work = sys.argv[1]
line = re.compile(r"\[ (\d+)s \] thds: \d+ tps: ([\d.]+) .*lat \(ms,99%\): ([\d.]+)")

def phases(name):
    start, t0, t1 = (float(x) for x in open(f"{work}/{name}.alter").read().split())
    a, b = t0 - start, t1 - start
    out = {"before": [], "during": [], "after": []}
    for m in line.finditer(open(f"{work}/{name}.sb").read()):
        s, tps, p99 = int(m.group(1)), float(m.group(2)), float(m.group(3))
        # The report for second s covers (s-1, s].
        if s <= a and s > 2:
            out["before"].append((tps, p99))
        elif s - 1 >= a and s <= b:
            out["during"].append((tps, p99))
        elif s - 1 >= b:
            out["after"].append((tps, p99))
    return b - a, out

def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")

res = {}
for name in ("quire", "mariadb"):
    build_s, ph = phases(name)
    tps = {k: mean([t for t, _ in v]) for k, v in ph.items()}
    p99 = {k: max([p for _, p in v], default=float("nan")) for k, v in ph.items()}
    lost = 100.0 * (1 - tps["during"] / tps["before"])
    res[name] = (build_s, tps, p99, lost)
    print(f"{name:8} build {build_s:6.1f} s | TPS before {tps['before']:8.0f} during "
          f"{tps['during']:8.0f} after {tps['after']:8.0f} | lost during build {lost:5.1f}% | "
          f"worst per-second P99 ms before {p99['before']:.1f} during {p99['during']:.1f} "
          f"after {p99['after']:.1f}")
q, m = res["quire"], res["mariadb"]
print(f"quire/mariadb: build time {q[0] / m[0]:.2f}x, TPS before {q[1]['before'] / m[1]['before']:.2f}x, "
      f"during {q[1]['during'] / m[1]['during']:.2f}x, after {q[1]['after'] / m[1]['after']:.2f}x")
PY
