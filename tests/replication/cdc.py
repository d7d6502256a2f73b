#!/usr/bin/env python3
"""A real CDC client follows quire's binary log (issue 13).

python-mysql-replication (PyPI `mysql-replication`) reads the log as a
replica does (COM_BINLOG_DUMP) and decodes rows by the column names that
`binlog_row_metadata=FULL` puts in TABLE_MAP events. While it follows a
running `quire serve`, one connection makes random single-row INSERTs,
UPDATEs and DELETEs (autocommit) on a table of several types; after each,
the row as quire returns it is the model. The client must then have
received exactly the model's changes, in order, with every column by name.

Usage: cdc.py --port PORT [--ops N] [--seed S]   (quire serve, log_bin=ON)
"""

import argparse
import datetime
import decimal
import random
import sys
import threading

import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

COLUMNS = ["id", "name", "price", "at", "kind", "note"]


def norm(v):
    """One comparable form for what PyMySQL and the binlog decoder give."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    return v


def row_dict(row):
    return {c: norm(v) for c, v in zip(COLUMNS, row)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ops", type=int, default=300)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    settings = {"host": "127.0.0.1", "port": a.port, "user": "root", "passwd": ""}
    db = pymysql.connect(host="127.0.0.1", port=a.port, user="root", password="", autocommit=True)
    cur = db.cursor()
    cur.execute("SET GLOBAL binlog_row_metadata = FULL")
    cur.execute("CREATE DATABASE IF NOT EXISTS cdc")
    cur.execute("DROP TABLE IF EXISTS cdc.items")
    cur.execute(
        "CREATE TABLE cdc.items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL,"
        " price DECIMAL(10,2), at DATETIME, kind ENUM('a','b','c') NOT NULL, note TEXT)"
    )
    cur.execute("SHOW MASTER STATUS")
    log_file, log_pos = cur.fetchone()[:2]

    got = []
    done = threading.Event()
    errors = []

    def follow():
        stream = BinLogStreamReader(
            connection_settings=settings,
            server_id=4242,
            blocking=True,
            resume_stream=True,
            log_file=log_file,
            log_pos=log_pos,
            only_schemas=["cdc"],
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        )
        try:
            for ev in stream:
                for r in ev.rows:
                    if isinstance(ev, WriteRowsEvent):
                        got.append(("insert", {k: norm(v) for k, v in r["values"].items()}))
                    elif isinstance(ev, DeleteRowsEvent):
                        got.append(("delete", {k: norm(v) for k, v in r["values"].items()}))
                    else:
                        got.append(
                            (
                                "update",
                                {k: norm(v) for k, v in r["before_values"].items()},
                                {k: norm(v) for k, v in r["after_values"].items()},
                            )
                        )
                    if got[-1][0] == "insert" and got[-1][1].get("id") == -1:
                        done.set()
                        return
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))
            done.set()
        finally:
            stream.close()

    t = threading.Thread(target=follow, daemon=True)
    t.start()

    def fetch(i):
        cur.execute("SELECT id, name, price, at, kind, note FROM cdc.items WHERE id = %s", (i,))
        r = cur.fetchone()
        return row_dict(r) if r else None

    want = []
    ids = set()
    for n in range(a.ops):
        op = rng.random()
        if not ids or op < 0.45:
            i = rng.randrange(1, 10_000)
            if i in ids:
                continue
            cur.execute(
                "INSERT INTO cdc.items VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    i,
                    f"item-{i}-é",
                    None if rng.random() < 0.2 else f"{rng.randrange(0, 99999)}.{rng.randrange(0, 100):02d}",
                    f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} 12:{rng.randrange(0, 60):02d}:00",
                    rng.choice("abc"),
                    None if rng.random() < 0.3 else "note " * rng.randrange(1, 50),
                ),
            )
            ids.add(i)
            want.append(("insert", fetch(i)))
        elif op < 0.8:
            i = rng.choice(sorted(ids))
            before = fetch(i)
            cur.execute(
                "UPDATE cdc.items SET name = %s, kind = %s, price = price + 1 WHERE id = %s",
                (f"renamed-{n}", rng.choice("abc"), i),
            )
            after = fetch(i)
            if after != before:
                want.append(("update", before, after))
        else:
            i = rng.choice(sorted(ids))
            before = fetch(i)
            cur.execute("DELETE FROM cdc.items WHERE id = %s", (i,))
            ids.discard(i)
            want.append(("delete", before))
    cur.execute("INSERT INTO cdc.items (id, name, kind) VALUES (-1, 'end', 'a')")
    want.append(("insert", fetch(-1)))

    if not done.wait(60):
        print(f"cdc: the client saw {len(got)} of {len(want)} changes in 60 s")
        return 1
    if errors:
        print(f"cdc: the client failed: {errors[0]}")
        return 1
    if got != want:
        for k, (g, w) in enumerate(zip(got, want)):
            if g != w:
                print(f"cdc: change {k} differs:\n  got  {g}\n  want {w}")
                break
        print(f"cdc: {len(got)} changes received, {len(want)} made")
        return 1
    kinds = {k: sum(1 for x in want if x[0] == k) for k in ("insert", "update", "delete")}
    print(
        f"cdc: python-mysql-replication received all {len(want)} changes with column names "
        f"({kinds['insert']} inserts, {kinds['update']} updates, {kinds['delete']} deletes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
