#!/usr/bin/env python3
"""Real-process crash loop: kill -9 `quire serve` under load, sometimes again
inside the recovery that follows, and judge every restart against a model of
what the server acknowledged.

    writers (8 threads, PyMySQL, autocommit off)        quire serve (1/1)
      BEGIN; INSERT t (id = w*10^9 + seq);  ───────►
             UPDATE c SET n = seq WHERE w;
      COMMIT  ── OK ──► model: acked[w] = seq
                                      kill -9 at a random moment
                        [a third of the cycles: restart, kill -9 again
                         0.05-0.8 s into the start, i.e. inside recovery]
                        restart, wait until it answers, then check:

  * every acknowledged transaction is there (seq <= acked[w] present);
  * all-or-nothing: for each writer, t holds exactly seqs 1..c.n (each
    writer commits in order, so a gap or a row without its counter is a
    torn transaction); at most one unacknowledged (in-doubt) transaction
    per writer may be there;
  * every pad (MEDIUMTEXT; one in 25 is 5-300 KB, off-page) has the
    length and content its (w, seq) wrote;
  * every few cycles and at the end: the ids in the binary log (decoded
    by Debian's `mariadb-binlog --verbose`) are exactly the ids in t.

Prints one line per cycle and a last `key=value` line; exits 1 on any
violation. Needs PyMySQL (installed with pip when missing) and, for the
binlog check, `mariadb-binlog`.
"""

import argparse
import glob
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import pymysql
except ImportError:  # pragma: no cover - installed on first use
    subprocess.check_call(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pymysql"]
    )
    import pymysql

SEQ_BASE = 10**9


def pad_len(w, seq):
    """The pad's length for (w, seq): mostly short, one in 25 a long value
    that goes off-page (5 KB to 300 KB), deterministic so that a check
    knows every length."""
    h = (w * 2654435761 + seq * 40503) % 1000003
    return 5000 + h % 295000 if h % 25 == 0 else h % 200


def pad_of(w, seq):
    unit = f"{w}:{seq};"
    n = pad_len(w, seq)
    return (unit * (n // len(unit) + 1))[:n]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, datadir, port, log_path):
        self.binary, self.datadir, self.port, self.log_path = binary, datadir, port, log_path
        self.proc = None

    def start(self):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [
                self.binary,
                "serve",
                f"--datadir={self.datadir}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                "--innodb-flush-log-at-trx-commit=1",
                "--sync-binlog=1",
                "--max-binlog-size=4M",
            ],
            stdout=log,
            stderr=log,
        )

    def connect(self, timeout_s=60.0):
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"quire serve exited with {self.proc.returncode}; see {self.log_path}")
            try:
                return pymysql.connect(host="127.0.0.1", port=self.port, user="root", connect_timeout=5)
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def answering(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill9()
                return -9
        return self.proc.returncode if self.proc else 0


def writer(port, w, acked, in_doubt, stop, lock):
    """Commits transactions in order until the server dies or `stop`."""
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kl", autocommit=False)
    except Exception:
        return
    cur = conn.cursor()
    seq = acked[w]
    while not stop.is_set():
        seq += 1
        try:
            cur.execute("BEGIN")
            cur.execute(
                "INSERT INTO t (id, w, seq, pad) VALUES (%s, %s, %s, %s)",
                (w * SEQ_BASE + seq, w, seq, pad_of(w, seq)),
            )
            cur.execute("UPDATE c SET n = %s WHERE w = %s", (seq, w))
            cur.execute("COMMIT")
        except Exception:
            # The server died somewhere in this transaction: in doubt.
            with lock:
                in_doubt[w] = seq
            return
        with lock:
            acked[w] = seq


def check_state(conn, acked, in_doubt, writers):
    """Returns a list of violations after a recovery."""
    problems = []
    cur = conn.cursor()
    cur.execute("SELECT w, n FROM kl.c")
    counters = dict(cur.fetchall())
    cur.execute("SELECT w, COUNT(*), MIN(seq), MAX(seq) FROM kl.t GROUP BY w")
    rows = {w: (cnt, lo, hi) for (w, cnt, lo, hi) in cur.fetchall()}
    # Every pad whole: its length as written, its content the (w, seq) unit
    # repeated (long ones are off-page chains; a torn or foreign chain shows).
    cur.execute("SELECT w, SUM(LENGTH(pad)) FROM kl.t GROUP BY w")
    pad_bytes = {w: int(n) for (w, n) in cur.fetchall()}
    cur.execute(
        "SELECT COUNT(*) FROM kl.t WHERE pad <> LEFT(REPEAT(CONCAT(w, ':', seq, ';'), 1 + LENGTH(pad) DIV 4), LENGTH(pad))"
    )
    (bad_pads,) = cur.fetchone()
    if bad_pads:
        problems.append(f"{bad_pads} rows whose pad is not what was written")
    for w in range(writers):
        n = counters.get(w)
        cnt, lo, hi = rows.get(w, (0, None, None))
        if n is None:
            problems.append(f"writer {w}: counter row missing")
            continue
        if n < acked[w]:
            problems.append(f"writer {w}: acknowledged seq {acked[w]} lost (counter at {n})")
        allowed = max(acked[w], in_doubt.get(w, 0))
        if n > allowed:
            problems.append(f"writer {w}: counter {n} beyond anything sent ({allowed})")
        if cnt != n or (n > 0 and (lo != 1 or hi != n)):
            problems.append(f"writer {w}: t holds {cnt} rows seq {lo}..{hi} but counter is {n} (torn transaction)")
        elif pad_bytes.get(w, 0) != sum(pad_len(w, q) for q in range(1, n + 1)):
            problems.append(f"writer {w}: pads hold {pad_bytes.get(w, 0)} bytes, not what seq 1..{n} wrote")
        # What survived is the truth from now on: an in-doubt commit that
        # survived counts as done, one that did not is gone.
        acked[w] = n
    return problems


def binlog_ids(datadir, tmp):
    """The t ids in every binlog file, by mariadb-binlog --verbose."""
    ids = set()
    files = sorted(f for f in glob.glob(os.path.join(datadir, "binlog.[0-9]*")))
    row = re.compile(r"^###   @1=(-?\d+)")
    for f in files:
        out = subprocess.run(
            ["mariadb-binlog", "--verbose", f], capture_output=True, text=True
        )
        if out.returncode != 0:
            raise RuntimeError(f"mariadb-binlog {f}: {out.stderr.strip()}")
        in_t = False
        for line in out.stdout.splitlines():
            if line.startswith("### INSERT INTO"):
                in_t = line.strip() == "### INSERT INTO `kl`.`t`"
                continue
            if line.startswith("### ") and not line.startswith("###   ") and line.strip() not in ("### SET", "### WHERE"):
                in_t = False
                continue
            if in_t:
                m = row.match(line)
                if m:
                    ids.add(int(m.group(1)))
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the quire binary")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--binlog-check-every", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="quire-killloop-")
    datadir = os.path.join(tmp, "data")
    srv = Server(a.bin, datadir, free_port(), os.path.join(tmp, "serve.log"))
    acked = {w: 0 for w in range(a.writers)}
    lost = violations = recovery_kills = recovery_kills_landed = 0
    acked_total = 0
    binlog_checks = 0
    ok = False
    try:
        srv.start()
        conn = srv.connect()
        cur = conn.cursor()
        cur.execute("CREATE DATABASE kl")
        cur.execute(
            "CREATE TABLE kl.t (id BIGINT PRIMARY KEY, w INT NOT NULL, seq BIGINT NOT NULL, pad MEDIUMTEXT, KEY (w, seq))"
        )
        cur.execute("CREATE TABLE kl.c (w INT PRIMARY KEY, n BIGINT NOT NULL)")
        for w in range(a.writers):
            cur.execute("INSERT INTO kl.c VALUES (%s, 0)", (w,))
        conn.commit()
        conn.close()
        for cycle in range(1, a.cycles + 1):
            stop = threading.Event()
            lock = threading.Lock()
            in_doubt = {}
            before = dict(acked)
            threads = [
                threading.Thread(target=writer, args=(srv.port, w, acked, in_doubt, stop, lock))
                for w in range(a.writers)
            ]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.3, 1.5))
            srv.kill9()
            stop.set()
            for t in threads:
                t.join()
            acked_total += sum(acked[w] - before[w] for w in acked)
            second = rng.random() < 1 / 3
            landed = False
            if second:
                recovery_kills += 1
                srv.start()
                # Start-up with a short log takes tens of ms: kill early.
                time.sleep(rng.uniform(0.0, 0.25))
                # Inside recovery when the server does not answer yet.
                landed = not srv.answering()
                recovery_kills_landed += landed
                srv.kill9()
            srv.start()
            conn = srv.connect()
            problems = check_state(conn, acked, in_doubt, a.writers)
            lost += sum(1 for p in problems if "lost" in p)
            conn.close()
            check_binlog = problems == [] and (
                cycle % a.binlog_check_every == 0 or cycle == a.cycles
            )
            diff = ""
            if check_binlog:
                conn = srv.connect()
                cur = conn.cursor()
                cur.execute("SELECT id FROM kl.t")
                table_ids = {r[0] for r in cur.fetchall()}
                conn.close()
                # Stop the server so that the active binlog file is final.
                rc = srv.stop()
                if rc != 0:
                    problems.append(f"clean shutdown exited with {rc}")
                ids = binlog_ids(datadir, tmp)
                binlog_checks += 1
                only_bl, only_t = len(ids - table_ids), len(table_ids - ids)
                diff = f" binlog_only={only_bl} table_only={only_t}"
                if only_bl or only_t:
                    problems.append(
                        f"binlog and table differ: {only_bl} ids only in the binlog, {only_t} only in the table"
                    )
                srv.start()
                srv.connect().close()
            if problems:
                violations += 1
                for p in problems:
                    print(f"VIOLATION cycle {cycle}: {p}", flush=True)
            print(
                f"cycle {cycle}: acked={sum(acked.values())} in_doubt={len(in_doubt)} "
                f"recovery_kill={'yes' if second else 'no'}{' (inside recovery)' if landed else ''}{diff}",
                flush=True,
            )
            if violations and not a.keep:
                a.keep = True
        srv.connect().close()  # up (SIGTERM during start-up is not a clean stop)
        rc = srv.stop()
        if rc != 0:
            print(f"VIOLATION: the last clean shutdown exited with {rc}", flush=True)
        ok = violations == 0 and rc == 0
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.kill9()
        print(
            f"killloop: cycles={a.cycles} violations={violations} lost_acked={lost} "
            f"acked_commits={acked_total} recovery_kills={recovery_kills} "
            f"recovery_kills_inside_recovery={recovery_kills_landed} binlog_checks={binlog_checks} seed={seed}",
            flush=True,
        )
        if a.keep or not ok:
            print(f"killloop: data directory and log kept in {tmp}", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
