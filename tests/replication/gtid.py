#!/usr/bin/env python3
"""GTID auto-positioning (COM_BINLOG_DUMP_GTID) against quire (issue 13).

python-mysql-replication with `auto_position=<GTID set>` asks for the log as
a MySQL replica with MASTER_AUTO_POSITION=1 does: it sends the GTIDs it
already has, and the source must send exactly the transactions it lacks.

1. gtid_mode is stepped up to ON (with enforce_gtid_consistency=ON) and the
   log reset, so every transaction has a GTID of quire's server_uuid;
2. CREATE DATABASE, CREATE TABLE and N single-row INSERTs: GTIDs 1..N+2,
   across a rotation;
3. a client that has 1..K receives GTIDs K+1..N+2 in order, each INSERT's
   row with it, and nothing else;
4. after PURGE BINARY LOGS of the first file, a client that lacks GTIDs
   only that file held is refused (1236, "purged required binary logs"),
   and one that has them is served;
5. gtid_mode is stepped back down to OFF.

Usage: gtid.py --port PORT [--rows N]   (quire serve, log_bin=ON)
"""

import argparse
import sys

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import GtidEvent
from pymysqlreplication.row_event import WriteRowsEvent


def stream(settings, have, server_id):
    """(gno, [ids]) per GTID received, reading until caught up."""
    reader = BinLogStreamReader(
        connection_settings=settings,
        server_id=server_id,
        auto_position=have,
        blocking=False,
        only_events=[GtidEvent, WriteRowsEvent],
    )
    got = []
    try:
        for ev in reader:
            if isinstance(ev, GtidEvent):
                got.append((int(ev.gtid.split(":")[1]), []))
            elif got:
                got[-1][1].extend(r["values"]["id"] for r in ev.rows)
    finally:
        reader.close()
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rows", type=int, default=30)
    a = ap.parse_args()
    settings = {"host": "127.0.0.1", "port": a.port, "user": "root", "passwd": ""}
    db = pymysql.connect(host="127.0.0.1", port=a.port, user="root", password="", autocommit=True)
    cur = db.cursor()
    for stmt in [
        "SET GLOBAL binlog_row_metadata = FULL",
        "SET GLOBAL enforce_gtid_consistency = ON",
        "SET GLOBAL gtid_mode = OFF_PERMISSIVE",
        "SET GLOBAL gtid_mode = ON_PERMISSIVE",
        "SET GLOBAL gtid_mode = ON",
        "RESET MASTER",
        "DROP DATABASE IF EXISTS gt",
    ]:
        cur.execute(stmt)
    cur.execute("SELECT @@server_uuid")
    uuid = cur.fetchone()[0]
    cur.execute("CREATE DATABASE gt")  # GTID 1
    cur.execute("CREATE TABLE gt.t (id INT PRIMARY KEY, v VARCHAR(10))")  # GTID 2
    n = a.rows
    for i in range(1, n + 1):  # GTIDs 3 .. n+2
        cur.execute("INSERT INTO gt.t VALUES (%s, 'x')", (i,))
        if i == n // 2:
            cur.execute("FLUSH BINARY LOGS")
    cur.execute("SELECT @@gtid_executed")
    executed = cur.fetchone()[0]
    if executed != f"{uuid}:1-{n + 2}":
        sys.exit(f"gtid_executed is {executed!r}, expected {uuid}:1-{n + 2}")

    k = n // 3
    got = stream(settings, f"{uuid}:1-{k}", 9101)
    want = [(g, [g - 2] if g >= 3 else []) for g in range(k + 1, n + 3)]
    if got != want:
        sys.exit(f"auto-position from {uuid}:1-{k}: got {got}, expected {want}")
    print(f"gtid: a client with {uuid}:1-{k} received GTIDs {k + 1}..{n + 2} and their rows, nothing else")

    cur.execute("SHOW BINARY LOGS")
    first = cur.fetchall()[1][0]
    cur.execute(f"PURGE BINARY LOGS TO '{first}'")
    cur.execute("SELECT @@gtid_purged")
    purged = cur.fetchone()[0]
    try:
        stream(settings, f"{uuid}:1-2", 9102)
        sys.exit(f"a client lacking purged GTIDs ({purged}) was served")
    except pymysql.err.OperationalError as e:
        if e.args[0] != 1236 or "purged required binary logs" not in str(e):
            sys.exit(f"a client lacking purged GTIDs: unexpected error {e}")
    got = stream(settings, purged, 9103)
    last = int(purged.split(":")[1].split("-")[-1])
    if [g for g, _ in got] != list(range(last + 1, n + 3)):
        sys.exit(f"auto-position from {purged}: got {[g for g, _ in got]}")
    print(f"gtid: after PURGE (gtid_purged {purged}) a client lacking it is refused (1236), one with it is served")

    for stmt in [
        "SET GLOBAL gtid_mode = ON_PERMISSIVE",
        "SET GLOBAL gtid_mode = OFF_PERMISSIVE",
        "SET GLOBAL gtid_mode = OFF",
    ]:
        cur.execute(stmt)


if __name__ == "__main__":
    main()
