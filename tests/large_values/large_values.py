#!/usr/bin/env python3
"""Long values through `quire serve`, as a client sees them.

Starts quire serve on a fresh data directory and, over PyMySQL, runs a
matrix of every BLOB/TEXT type (and long VARCHAR/VARBINARY) against value
sizes from 0 bytes to 16 MiB: insert, read back byte for byte, update to
another size, a secondary index on another column of the same rows, and the
type limits (a value one byte over is 1406 "Data too long" in strict mode).
Then kill -9 of the server, restart (recovery), and every acknowledged value
must read back whole; a clean stop, `mariadb-binlog --verbose` must decode
every binlog file with one row event per write, and `quire check` must find
the data directory clean (no leaked or doubly owned LOB page).

    tests/large_values/large_values.py --bin target/release/quire [--quick]

--quick caps values at 4 MiB (CI runs the full matrix; --quick is for a
first look). Exit status 0 only when everything holds.
"""

import argparse
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "killloop"))
from killloop import Server, free_port  # noqa: E402

import pymysql  # noqa: E402  (installed by killloop's import)

MIB = 1 << 20
# (column type, maximum bytes)
TYPES = [
    ("TINYBLOB", 255),
    ("BLOB", 65535),
    ("MEDIUMBLOB", 16 * MIB - 1),
    ("LONGBLOB", 4 * 1024 * MIB - 1),
    ("TINYTEXT", 255),
    ("TEXT", 65535),
    ("MEDIUMTEXT", 16 * MIB - 1),
    ("LONGTEXT", 4 * 1024 * MIB - 1),
    ("VARBINARY(60000)", 60000),
    ("VARCHAR(16000)", 16000),
]
SIZES = [0, 1, 40, 41, 255, 256, 4096, 8200, 65535, 65536, 1 * MIB, 16 * MIB - 1, 16 * MIB]


def value(n, seed):
    """n bytes of printable text (valid utf8mb4 for the TEXT types)."""
    unit = hashlib.sha256(str(seed).encode()).hexdigest().encode()
    return (unit * (n // len(unit) + 1))[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    sizes = [s for s in SIZES if not a.quick or s <= 4 * MIB]
    tmp = tempfile.mkdtemp(prefix="quire-lv-")
    datadir = os.path.join(tmp, "data")
    srv = Server(os.path.abspath(a.bin), datadir, free_port(), os.path.join(tmp, "serve.log"))
    srv.start()
    conn = srv.connect()
    cur = conn.cursor()
    cur.execute("CREATE DATABASE lv")
    cur.execute("USE lv")
    model = {}  # (table, id) -> bytes or None
    problems = []
    writes = 0
    refused = 0
    for ti, (ty, limit) in enumerate(TYPES):
        tbl = f"t{ti}"
        cur.execute(f"CREATE TABLE {tbl} (id INT PRIMARY KEY, v {ty}, tag VARCHAR(20), KEY ktag (tag))")
        for i, n in enumerate(sizes):
            v = value(n, (ti, i))
            try:
                cur.execute(f"INSERT INTO {tbl} VALUES (%s, %s, %s)", (i, v, f"s{n}"))
                conn.commit()
            except pymysql.err.MySQLError as e:
                if n > limit and e.args[0] == 1406:
                    refused += 1
                    continue
                problems.append(f"{ty} {n} bytes: insert failed: {e}")
                continue
            if n > limit:
                problems.append(f"{ty}: a {n}-byte value over the {limit}-byte limit was accepted")
                continue
            writes += 1
            model[(tbl, i)] = v
        # Update every row to the size of another (grow, shrink, in-row <->
        # off-page), then read back through the secondary index.
        ids = sorted(i for (t, i) in model if t == tbl)
        for j, i in enumerate(ids):
            other = model[(tbl, ids[(j + 1) % len(ids)])]
            v = value(len(other), (ti, i, "u"))
            cur.execute(f"UPDATE {tbl} SET v = %s WHERE id = %s", (v, i))
            conn.commit()
            writes += 1
            model[(tbl, i)] = v
        for i in ids:
            cur.execute(f"SELECT id, v FROM {tbl} WHERE tag = %s", (f"s{sizes[i]}",))
            rows = cur.fetchall()
            got = bytes(rows[0][1]) if rows and isinstance(rows[0][1], (bytes, bytearray)) else (
                rows[0][1].encode() if rows else None)
            if got != model[(tbl, i)]:
                problems.append(f"{ty} id {i}: read back {len(got or b'')} bytes, wrote {len(model[(tbl, i)])}")
    conn.close()

    def verify(label):
        c = srv.connect()
        k = c.cursor()
        for (tbl, i), v in model.items():
            k.execute(f"SELECT v FROM lv.{tbl} WHERE id = %s", (i,))
            r = k.fetchone()
            got = None if r is None else (r[0] if isinstance(r[0], (bytes, bytearray)) else r[0].encode())
            if got != v:
                problems.append(f"{label}: lv.{tbl} id {i}: {len(got or b'')} bytes, acknowledged {len(v)}")
        c.close()

    verify("before the crash")
    srv.kill9()
    srv.start()
    verify("after kill -9 and recovery")
    rc = srv.stop()
    if rc != 0:
        problems.append(f"quire serve exited {rc} on SIGTERM")
    # The binlog: every file decodes, one row event per acknowledged write.
    events = 0
    for f in sorted(glob.glob(os.path.join(datadir, "binlog.[0-9]*"))):
        out = subprocess.run(["mariadb-binlog", "--verbose", f], capture_output=True, text=True, errors="replace")
        if out.returncode != 0:
            problems.append(f"mariadb-binlog {os.path.basename(f)}: {out.stderr.strip()[:200]}")
        events += len(re.findall(r"^### (INSERT INTO|UPDATE) `lv`", out.stdout, re.M))
    if events != writes:
        problems.append(f"mariadb-binlog decoded {events} row events, {writes} writes were acknowledged")
    ck = subprocess.run([a.bin, "check", f"--datadir={datadir}"], capture_output=True, text=True)
    m = re.search(r"lob_chains=(\d+) lob_orphans=(\d+) errors=(\d+)", ck.stdout)
    if ck.returncode != 0 or not m or m.group(3) != "0":
        problems.append(f"quire check: {ck.stdout.strip()[-300:]}")
    print(
        f"large-values: types={len(TYPES)} sizes={len(sizes)} max_bytes={max(sizes)} writes={writes} "
        f"refused_1406={refused} binlog_row_events={events} "
        f"{'lob_chains=' + m.group(1) if m else ''} problems={len(problems)}"
    )
    for p in problems[:40]:
        print("PROBLEM", p)
    if not problems:
        subprocess.run(["rm", "-rf", tmp])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
