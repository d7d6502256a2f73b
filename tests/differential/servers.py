"""Server processes for the differential tester: a private MariaDB 10.11 and
`quire serve`, each on a fresh data directory and a free loopback port, and
a statement runner that gives back one comparable `Outcome` per statement.

Nothing here is shared with another MariaDB on the machine: `--no-defaults`
keeps /etc/mysql out, the socket and pid file live in the private data
directory, and the server listens on 127.0.0.1 only. Both processes are
children of this process and are stopped by `stop()` (SIGTERM, then
SIGKILL after a grace period); `atexit` and a signal handler in difftest.py
make sure that happens on every way out.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Optional

import pymysql
import pymysql.constants.FIELD_TYPE as FT

# sql_mode set identically on both servers at session start: MySQL 8.0's
# default (quire's default too).
SQL_MODE = (
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)

# Per-statement time limit in seconds: MariaDB enforces it itself
# (max_statement_time); for quire the socket read timeout is the limit
# (a hang is a finding and the server is restarted).
STATEMENT_SECONDS = 5
QUIRE_READ_TIMEOUT = 15


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_open(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.3).close()
        return True
    except OSError:
        return False


# ---------------------------------------------------------------------------
# Outcomes


# Column type classes compared between the servers: the integer widths,
# string/blob flavours and float/double are not compared (MySQL and MariaDB
# choose widths differently for expressions), the class is.
TYPE_CLASS = {
    FT.TINY: "int", FT.SHORT: "int", FT.LONG: "int", FT.INT24: "int",
    FT.LONGLONG: "int", FT.YEAR: "int", FT.BIT: "int",
    FT.DECIMAL: "decimal", FT.NEWDECIMAL: "decimal",
    FT.FLOAT: "float", FT.DOUBLE: "float",
    FT.NULL: "null",
    FT.DATETIME: "datetime", FT.TIMESTAMP: "datetime", FT.DATE: "date",
    FT.NEWDATE: "date", FT.TIME: "time",
    FT.VARCHAR: "string", FT.VAR_STRING: "string", FT.STRING: "string",
    FT.TINY_BLOB: "string", FT.MEDIUM_BLOB: "string", FT.LONG_BLOB: "string",
    FT.BLOB: "string", FT.ENUM: "string", FT.SET: "string",
    FT.JSON: "json", FT.GEOMETRY: "geometry",
}


@dataclass
class Outcome:
    """What one statement did on one server."""

    error: Optional[int] = None  # MySQL error code, None on success
    message: str = ""
    columns: list = field(default_factory=list)  # type classes
    rows: Optional[list] = None  # list of tuples of text (or None)
    warnings: int = 0
    # "code message" of each warning (SHOW WARNINGS), read when there are any
    warning_texts: list = field(default_factory=list)
    affected: int = -1  # rows affected (statements without a result set)
    timeout: bool = False  # no answer within the read timeout
    seconds: float = 0.0

    def short(self):
        if self.timeout:
            return "TIMEOUT (no answer)"
        if self.error is not None:
            return f"ERROR {self.error}: {self.message}"
        n = len(self.rows) if self.rows is not None else 0
        return f"OK cols={self.columns} rows={n} warnings={self.warnings}"


# Text protocol values come back as bytes/str, never converted: the
# comparison decides per column type how to read them.
_RAW_CONV = {}


class Conn:
    """One PyMySQL connection with the session settings both servers share."""

    def __init__(self, port, db=None, read_timeout=None, mariadb=False):
        self.port, self.db, self.mariadb = port, db, mariadb
        self.read_timeout = read_timeout
        self.c = None

    def open(self):
        self.c = pymysql.connect(
            host="127.0.0.1",
            port=self.port,
            user="root",
            password="",
            database=self.db,
            autocommit=True,
            connect_timeout=10,
            read_timeout=self.read_timeout,
            write_timeout=self.read_timeout,
            conv=_RAW_CONV,
            charset="utf8mb4",
        )
        cur = self.c.cursor()
        cur.execute(f"SET SESSION sql_mode = '{SQL_MODE}'")
        # Both servers compare in utf8mb4_bin: literals (the connection's
        # collation) and the databases the test creates (collation_server;
        # MariaDB's server is also started with it). MySQL 8.0's default
        # utf8mb4_0900_ai_ci is not in MariaDB 10.11; collations.py checks
        # the weights of the collations both have.
        cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_bin")
        cur.execute("SET SESSION collation_server = utf8mb4_bin")
        if self.mariadb:
            # The statement time limit (seconds).
            cur.execute(f"SET SESSION max_statement_time = {STATEMENT_SECONDS}")
        cur.close()

    def close(self):
        if self.c is not None:
            try:
                self.c.close()
            except Exception:
                pass
            self.c = None

    def run(self, sql, max_rows=100000):
        """Runs one statement; never raises for SQL errors or timeouts."""
        if self.c is None:
            self.open()
        t0 = time.monotonic()
        out = Outcome()
        cur = self.c.cursor()
        try:
            cur.execute(sql)
            if cur.description is not None:
                out.columns = [TYPE_CLASS.get(d[1], f"type{d[1]}") for d in cur.description]
                rows = cur.fetchmany(max_rows + 1)
                if len(rows) > max_rows:
                    rows = rows[:max_rows]
                out.rows = [tuple(_text(v) for v in r) for r in rows]
            else:
                out.rows = None
                out.affected = cur.rowcount
            res = getattr(cur, "_result", None)
            out.warnings = getattr(res, "warning_count", 0) or 0
            if out.warnings:
                cur.execute("SHOW WARNINGS")
                out.warning_texts = [f"{_text(r[1])} {_text(r[2])}" for r in cur.fetchall()]
        except pymysql.err.OperationalError as e:
            code = e.args[0] if e.args else 0
            if code in (2013, 2006, 2014, 2055) or "timed out" in str(e):
                out.timeout = True
                out.message = str(e)
                self.close()
            else:
                out.error, out.message = code, _msg(e)
        except pymysql.err.MySQLError as e:
            out.error = e.args[0] if e.args and isinstance(e.args[0], int) else -1
            out.message = _msg(e)
        except (OSError, TimeoutError) as e:
            out.timeout = True
            out.message = str(e)
            self.close()
        finally:
            try:
                cur.close()
            except Exception:
                pass
        out.seconds = time.monotonic() - t0
        return out


def _text(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "surrogateescape")
    return str(v)


def _msg(e):
    return str(e.args[1]) if len(e.args) > 1 else str(e)


# ---------------------------------------------------------------------------
# Processes


class Proc:
    def __init__(self, name, workdir):
        self.name, self.workdir = name, workdir
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, f"{name}.log")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout_s=120):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.name} exited during start-up; see {self.log_path}:\n{tail(self.log_path)}")
            if port_open(self.port):
                try:
                    c = pymysql.connect(host="127.0.0.1", port=self.port, user="root", connect_timeout=3)
                    c.close()
                    return
                except pymysql.err.MySQLError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer on port {self.port} within {timeout_s} s")

    def stop(self, grace_s=30):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class MariaDB(Proc):
    """A private mariadbd: mariadb-install-db into a fresh directory, then
    mariadbd --no-defaults on a loopback port and a socket in that
    directory."""

    def __init__(self, workdir, port=None):
        super().__init__("mariadb", workdir)
        self.port = port or free_port()
        self.datadir = os.path.join(workdir, "mariadb-data")

    def start(self):
        for tool in ("mariadb-install-db", "mariadbd"):
            if not _which(tool):
                raise RuntimeError(
                    f"{tool} not found: install MariaDB 10.11 (apt-get install -y mariadb-server)"
                )
        if os.path.exists(self.datadir):
            shutil.rmtree(self.datadir)
        os.makedirs(self.datadir)
        user = ["--user=root"] if os.geteuid() == 0 else []
        with open(self.log_path, "a") as log:
            subprocess.run(
                [_which("mariadb-install-db"), "--no-defaults", f"--datadir={self.datadir}",
                 "--auth-root-authentication-method=normal", "--skip-test-db",
                 "--skip-name-resolve", *user],
                stdout=log, stderr=log, check=True, timeout=300,
            )
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [_which("mariadbd"), "--no-defaults", *user,
             f"--datadir={self.datadir}", f"--port={self.port}",
             f"--socket={os.path.join(self.datadir, 'mariadb.sock')}",
             f"--pid-file={os.path.join(self.datadir, 'mariadb.pid')}",
             "--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin",
             "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",
             "--innodb-buffer-pool-size=128M", "--innodb-flush-log-at-trx-commit=0",
             "--innodb-doublewrite=0", "--skip-performance-schema",
             f"--log-error={self.log_path}"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        self.wait_ready()

    def version(self):
        c = pymysql.connect(host="127.0.0.1", port=self.port, user="root")
        try:
            cur = c.cursor()
            cur.execute("SELECT VERSION()")
            return cur.fetchone()[0]
        finally:
            c.close()


class Quire(Proc):
    """`quire serve` on a fresh data directory (restartable after a hang)."""

    def __init__(self, binary, workdir):
        super().__init__("quire", workdir)
        self.binary = os.path.abspath(binary)
        self.datadir = os.path.join(workdir, "quire-data")
        self.starts = 0

    def start(self):
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"no quire binary at {self.binary} (cargo build --release -p quire)")
        if os.path.exists(self.datadir):
            shutil.rmtree(self.datadir)
        self.port = free_port()
        self.starts += 1
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [self.binary, "serve", f"--datadir={self.datadir}", f"--port={self.port}",
             "--bind-address=127.0.0.1", "--innodb-buffer-pool-size=64M",
             "--innodb-flush-log-at-trx-commit=0"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        self.wait_ready()

    def restart(self):
        """After a hang: kill -9 and start again on a fresh data directory."""
        self.kill()
        self.start()


def _which(tool):
    p = shutil.which(tool)
    if p:
        return p
    for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
        if os.access(os.path.join(d, tool), os.X_OK):
            return os.path.join(d, tool)
    return None
