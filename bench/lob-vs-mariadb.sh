#!/usr/bin/env bash
# 1 MiB BLOB inserts and reads against quire serve and MariaDB 10.11 on
# this machine, in one run, at innodb_flush_log_at_trx_commit=1 /
# sync_binlog=1 with the binary log on (off-page values: quire's
# crates/engine/src/offpage.rs, InnoDB's external BLOB pages).
#
#   bench/lob-vs-mariadb.sh [count] [value_bytes]
#
# Each insert is one autocommit statement whose value the server builds
# (REPEAT), so the client's cost does not hide the servers'; each read
# fetches the whole value. Prints MB/s and P50/P99/P99.9 per server and
# the quire/MariaDB ratios. The engine-only figure is `quire bench lob`.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
BYTES=${2:-1048576}
Q=${QUIRE:-./target/release/quire}
. bench/pair.sh
start_pair "$Q" "" "--max-allowed-packet=64M"
python3 - "$qport" "$mport" "$N" "$BYTES" <<'PY'
import sys, time
import pymysql

qport, mport, n, nbytes = (int(x) for x in sys.argv[1:5])

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] * 1000

def run(port):
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, max_allowed_packet=64 << 20)
    k = c.cursor()
    k.execute("CREATE DATABASE IF NOT EXISTS lobbench")
    k.execute("USE lobbench")
    k.execute("DROP TABLE IF EXISTS t")
    k.execute("CREATE TABLE t (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB")
    out = {}
    for phase in ("insert", "read"):
        lat = []
        t0 = time.perf_counter()
        for i in range(n):
            s = time.perf_counter()
            if phase == "insert":
                k.execute("INSERT INTO t VALUES (%s, REPEAT(CHAR(65 + %s %% 26), %s))", (i, i, nbytes))
            else:
                k.execute("SELECT b FROM t WHERE id = %s", (i,))
                (b,) = k.fetchone()
                assert len(b) == nbytes and b[:1] == bytes([65 + i % 26]), (i, len(b))
            lat.append(time.perf_counter() - s)
        secs = time.perf_counter() - t0
        out[phase] = (n * nbytes / 1e6 / secs, pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999))
    c.close()
    return out

res = {"quire": run(qport), "mariadb": run(mport)}
for name, r in res.items():
    for phase, (mbs, p50, p99, p999) in r.items():
        print(f"{name:<8} {phase:<6} values={n} bytes={nbytes} MB/s={mbs:.1f} p50_ms={p50:.2f} p99_ms={p99:.2f} p99.9_ms={p999:.2f}")
for phase in ("insert", "read"):
    q, m = res["quire"][phase], res["mariadb"][phase]
    print(f"ratio    {phase:<6} MB/s quire/mariadb={q[0] / m[0]:.2f} p99 quire/mariadb={q[2] / m[2]:.2f}")
PY
