"""Client integration test: quire behind the MySQL protocol, driven from Python.

Two drivers from PyPI talk to a running `quire serve` (tests/client/run.sh
starts one; set QUIRE_HOST / QUIRE_PORT to point at another server):

* PyMySQL (pure Python) for the text protocol. PyMySQL interpolates
  parameters on the client and sends COM_QUERY, so its `bytes` values
  arrive as raw bytes inside string literals.
* mysql-connector-python with `cursor(prepared=True)` for real server-side
  prepared statements (COM_STMT_PREPARE / COM_STMT_EXECUTE with binary
  parameters and binary result rows). If it cannot be imported those tests
  are skipped, unless QUIRE_REQUIRE_CONNECTOR=1 (run.sh sets it), where the
  skip becomes a failure.

Covered: NULLs, round trips of every column type quire has (integers with
their extremes, DECIMAL up to 65 digits, FLOAT, DOUBLE, CHAR, VARCHAR,
TEXT, BLOB with every byte value, BINARY/VARBINARY, DATE, DATETIME(6),
TIMESTAMP), MySQL errors as the driver's exception classes (1062, 1146,
1064, 1054, ...), transactions seen from a second connection (and the
server's IN_TRANS / AUTOCOMMIT status flags), LAST_INSERT_ID() and
cursor.lastrowid, accounts (CREATE USER, logging in with the password,
1045 for a wrong one, GRANT, DROP USER).

Run: python3 -m unittest -v tests/client/test_pymysql.py
"""

import datetime
import os
import unittest
from decimal import Decimal

import pymysql
import pymysql.err
from pymysql.constants import SERVER_STATUS

try:
    import mysql.connector as myconn

    CONNECTOR_ERROR = None
except Exception as e:  # pragma: no cover - depends on the environment
    myconn = None
    CONNECTOR_ERROR = repr(e)

HOST = os.environ.get("QUIRE_HOST", "127.0.0.1")
PORT = int(os.environ.get("QUIRE_PORT", "3306"))
DB = "pyclient"
REQUIRE_CONNECTOR = os.environ.get("QUIRE_REQUIRE_CONNECTOR") == "1"


def connect(user="root", password="", database=DB, **kw):
    kw.setdefault("autocommit", True)
    return pymysql.connect(
        host=HOST,
        port=PORT,
        user=user,
        password=password,
        database=database,
        charset="utf8mb4",
        connect_timeout=10,
        **kw,
    )


def setUpModule():
    c = connect(database=None)
    with c.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    c.close()


def tearDownModule():
    c = connect(database=None)
    with c.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
    c.close()


# Every column type quire has, with values that exercise its range:
# (column name, SQL type, [values]).
INT_CASES = [
    ("ti", "TINYINT", [-128, 0, 127]),
    ("tiu", "TINYINT UNSIGNED", [0, 255]),
    ("si", "SMALLINT", [-32768, 32767]),
    ("siu", "SMALLINT UNSIGNED", [0, 65535]),
    ("mi", "MEDIUMINT", [-8388608, 8388607]),
    ("miu", "MEDIUMINT UNSIGNED", [0, 16777215]),
    ("i", "INT", [-2147483648, 2147483647]),
    ("iu", "INT UNSIGNED", [0, 4294967295]),
    ("bi", "BIGINT", [-9223372036854775808, 9223372036854775807]),
    ("biu", "BIGINT UNSIGNED", [0, 18446744073709551615]),
]

DECIMAL_CASES = [
    ("d10_2", "DECIMAL(10,2)", ["0.00", "-12345678.90", "99999999.99", "-0.01"]),
    (
        "d65_0",
        "DECIMAL(65,0)",
        ["9" * 65, "-" + "9" * 65, "12345678901234567890123456789012345678901234567890123456789012345"],
    ),
    (
        "d65_30",
        "DECIMAL(65,30)",
        [
            "9" * 35 + "." + "9" * 30,
            "-" + "9" * 35 + "." + "9" * 30,
            "-0.000000000000000000000000000001",
            "3.141592653589793238462643383279",
        ],
    ),
    ("d5_5", "DECIMAL(5,5)", ["0.12345", "-0.99999"]),
]

BLOB_VALUE = bytes(range(256)) * 3 + b"'\\\"\x00\x1a%_"

# quire stores a row in one B+tree cell (no off-page columns yet): a row
# must stay under about 4 KB with 16 KB pages, so the long values here are
# a few KB, not MySQL's 64 KB / 4 GB.


class Base(unittest.TestCase):
    def setUp(self):
        self.conn = connect()
        self.cur = self.conn.cursor()

    def tearDown(self):
        self.cur.close()
        self.conn.close()

    def one(self, sql, args=None):
        self.cur.execute(sql, args)
        return self.cur.fetchone()

    def all(self, sql, args=None):
        self.cur.execute(sql, args)
        return self.cur.fetchall()


class TestTextProtocol(Base):
    def test_connect_and_session(self):
        version, comment, db = self.one("SELECT VERSION(), @@version_comment, DATABASE()")
        self.assertTrue(version.startswith("8.0"), version)
        self.assertEqual(comment, "quire")
        self.assertEqual(db, DB)
        self.assertTrue(self.conn.get_server_info().endswith("quire"))
        self.conn.ping()
        self.conn.select_db(DB)
        self.assertEqual(self.one("SELECT 1 + 1"), (2,))

    def test_nulls(self):
        cols = ", ".join(
            f"c{n} {t} NULL"
            for n, t in enumerate(
                [
                    "TINYINT",
                    "BIGINT UNSIGNED",
                    "DECIMAL(20,5)",
                    "FLOAT",
                    "DOUBLE",
                    "CHAR(5)",
                    "VARCHAR(20)",
                    "TEXT",
                    "BLOB",
                    "VARBINARY(10)",
                    "DATE",
                    "DATETIME(6)",
                    "TIMESTAMP NULL",
                ]
            )
        )
        self.cur.execute(f"CREATE TABLE nulls (id INT PRIMARY KEY, {cols})")
        self.cur.execute("INSERT INTO nulls (id) VALUES (1)")
        self.cur.execute(
            "INSERT INTO nulls VALUES (2" + ", %s" * 13 + ")", [None] * 13
        )
        rows = self.all("SELECT * FROM nulls ORDER BY id")
        self.assertEqual(rows, ((1,) + (None,) * 13, (2,) + (None,) * 13))
        self.assertEqual(self.one("SELECT NULL, NULL IS NULL, 1 + NULL, COALESCE(NULL, 7)"), (None, 1, None, 7))
        self.assertEqual(self.one("SELECT COUNT(*), COUNT(c1) FROM nulls WHERE c6 IS NULL"), (2, 0))
        self.cur.execute("UPDATE nulls SET c6 = 'x' WHERE id = %s", (2,))
        self.assertEqual(self.one("SELECT id FROM nulls WHERE c6 IS NOT NULL"), (2,))
        self.cur.execute("DROP TABLE nulls")

    def test_integers(self):
        cols = ", ".join(f"{n} {t}" for n, t, _ in INT_CASES)
        self.cur.execute(f"CREATE TABLE ints (id INT PRIMARY KEY, {cols})")
        width = max(len(v) for _, _, v in INT_CASES)
        for row in range(width):
            vals = [v[min(row, len(v) - 1)] for _, _, v in INT_CASES]
            self.cur.execute(
                "INSERT INTO ints VALUES (%s" + ", %s" * len(vals) + ")",
                [row] + vals,
            )
            got = self.one("SELECT * FROM ints WHERE id = %s", (row,))
            self.assertEqual(list(got[1:]), vals)
            for v in got[1:]:
                self.assertIsInstance(v, int)
        # Out of range in strict mode: 1264.
        with self.assertRaises(pymysql.err.DataError) as cm:
            self.cur.execute("INSERT INTO ints (id, ti) VALUES (100, 128)")
        self.assertEqual(cm.exception.args[0], 1264)
        with self.assertRaises(pymysql.err.DataError) as cm:
            self.cur.execute("INSERT INTO ints (id, biu) VALUES (101, -1)")
        self.assertEqual(cm.exception.args[0], 1264)
        # Extremes in WHERE and arithmetic on the server.
        self.assertEqual(
            self.one("SELECT id FROM ints WHERE biu = 18446744073709551615 ORDER BY id LIMIT 1"),
            (1,),
        )
        self.assertEqual(self.one("SELECT MAX(bi), MIN(bi) FROM ints"), (9223372036854775807, -9223372036854775808))
        self.cur.execute("DROP TABLE ints")

    def test_decimals(self):
        cols = ", ".join(f"{n} {t}" for n, t, _ in DECIMAL_CASES)
        self.cur.execute(f"CREATE TABLE decs (id INT PRIMARY KEY, {cols})")
        width = max(len(v) for _, _, v in DECIMAL_CASES)
        for row in range(width):
            vals = [Decimal(v[min(row, len(v) - 1)]) for _, _, v in DECIMAL_CASES]
            self.cur.execute(
                "INSERT INTO decs VALUES (%s" + ", %s" * len(vals) + ")",
                [row] + vals,
            )
            got = self.one("SELECT * FROM decs WHERE id = %s", (row,))
            for (name, _, _), want, have in zip(DECIMAL_CASES, vals, got[1:]):
                self.assertIsInstance(have, Decimal, name)
                self.assertEqual(have, want, name)
        # The scale is kept in the text: 0.00, not 0.
        self.cur.execute("SELECT CAST(d10_2 AS CHAR) FROM decs WHERE id = 0")
        self.assertEqual(self.cur.fetchone()[0], "0.00")
        self.assertEqual(
            self.one("SELECT SUM(d10_2) FROM decs WHERE id IN (0, 1)"),
            (Decimal("-12345678.90"),),
        )
        # Too many integer digits: 1264.
        with self.assertRaises(pymysql.err.DataError) as cm:
            self.cur.execute("INSERT INTO decs (id, d10_2) VALUES (100, 123456789.5)")
        self.assertEqual(cm.exception.args[0], 1264)
        self.cur.execute("DROP TABLE decs")

    def test_float_double(self):
        self.cur.execute("CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, d DOUBLE)")
        cases = [
            (0.0, 0.0),
            (1.5, 1.7976931348623157e308),
            (-0.25, -2.2250738585072014e-308),
            (3.0e38, 0.1),
            (-1.0e-30, 123456789.123456789),
            (1.0, 5e-324),
        ]
        for i, (f, d) in enumerate(cases):
            self.cur.execute("INSERT INTO fl VALUES (%s, %s, %s)", (i, f, d))
        for i, (f, d) in enumerate(cases):
            gf, gd = self.one("SELECT f, d FROM fl WHERE id = %s", (i,))
            self.assertIsInstance(gf, float)
            self.assertIsInstance(gd, float)
            # DOUBLE round-trips exactly; FLOAT to single precision, printed
            # with 6 significant digits as MySQL does.
            self.assertEqual(gd, d)
            self.assertAlmostEqual(gf, f, delta=abs(f) * 1e-6)
        self.cur.execute("DROP TABLE fl")

    def test_strings(self):
        self.cur.execute(
            "CREATE TABLE strs (id INT PRIMARY KEY, c CHAR(10), v VARCHAR(300), t TEXT, lt LONGTEXT)"
        )
        cases = [
            ("", "", "", ""),
            ("abc", "it's \"quoted\" \\ back\\slash", "line1\nline2\ttab\r\x00nul", "x"),
            ("héllo", "日本語テキスト", "emoji 🐬🚀 utf8mb4", "ü" * 1000),
            ("a" * 10, "v" * 300, "t" * 1500, "L" * 1500),
            ("%_", "100% _under_ LIKE", "'; DROP TABLE strs; --", "🐬" * 800),
        ]
        for i, row in enumerate(cases):
            self.cur.execute("INSERT INTO strs VALUES (%s, %s, %s, %s, %s)", (i,) + row)
        for i, row in enumerate(cases):
            got = self.one("SELECT c, v, t, lt FROM strs WHERE id = %s", (i,))
            self.assertEqual(got, row, f"row {i}")
            for v in got:
                self.assertIsInstance(v, str)
        # CHAR drops trailing spaces, as MySQL does.
        self.cur.execute("INSERT INTO strs (id, c) VALUES (100, 'pad  ')")
        self.assertEqual(self.one("SELECT c, LENGTH(c) FROM strs WHERE id = 100"), ("pad", 3))
        self.assertEqual(
            self.one("SELECT id FROM strs WHERE v LIKE %s", ("100\\% %",)), (4,)
        )
        # Too long for the column (strict): 1406.
        with self.assertRaises(pymysql.err.DataError) as cm:
            self.cur.execute("INSERT INTO strs (id, c) VALUES (101, %s)", ("x" * 11,))
        self.assertEqual(cm.exception.args[0], 1406)
        self.cur.execute("DROP TABLE strs")

    def blob_round_trip(self, conn):
        cur = conn.cursor()
        cur.execute("DELETE FROM blobs")
        cases = [
            (b"", b"", b""),
            (BLOB_VALUE, b"\x00\xff\x80", b"\x00\x01"),
            (bytes(range(256)) * 12, b"\xc3\x28", b"\xff" * 4),
            (b"plain ascii", b"'\\", b"ab"),
        ]
        for i, (bl, vb, bn) in enumerate(cases):
            cur.execute("INSERT INTO blobs VALUES (%s, %s, %s, %s)", (i, bl, vb, bn))
        for i, (bl, vb, bn) in enumerate(cases):
            cur.execute("SELECT bl, vb, bn, LENGTH(bl) FROM blobs WHERE id = %s", (i,))
            gbl, gvb, gbn, n = cur.fetchone()
            self.assertIsInstance(gbl, bytes)
            self.assertEqual(gbl, bl, f"row {i}")
            self.assertEqual(n, len(bl))
            self.assertEqual(gvb, vb)
            # BINARY(4) pads with zero bytes.
            self.assertEqual(gbn, bn.ljust(4, b"\x00"))
        cur.execute("SELECT id FROM blobs WHERE bl = %s", (BLOB_VALUE,))
        self.assertEqual(cur.fetchall(), ((1,),))
        cur.execute("SELECT HEX(vb) FROM blobs WHERE id = 1")
        self.assertEqual(cur.fetchone()[0], "00FF80")
        cur.close()

    def test_blobs(self):
        self.cur.execute(
            "CREATE TABLE blobs (id INT PRIMARY KEY, bl LONGBLOB, vb VARBINARY(100), bn BINARY(4))"
        )
        # PyMySQL sends bytes as raw bytes inside '...' (not UTF-8) ...
        self.blob_round_trip(self.conn)
        # ... or, with binary_prefix, as _binary'...'.
        c2 = connect(binary_prefix=True)
        self.blob_round_trip(c2)
        c2.close()
        self.cur.execute("DROP TABLE blobs")

    def test_temporal(self):
        self.cur.execute(
            "CREATE TABLE tm (id INT PRIMARY KEY, d DATE, dt DATETIME(6), dt0 DATETIME, ts TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL)"
        )
        cases = [
            (
                datetime.date(2024, 2, 29),
                datetime.datetime(2024, 2, 29, 23, 59, 58, 123456),
                datetime.datetime(2024, 2, 29, 1, 2, 3),
                datetime.datetime(2024, 2, 29, 12, 0, 0),
                datetime.datetime(2021, 1, 1, 0, 0, 0, 1),
            ),
            (
                datetime.date(1000, 1, 1),
                datetime.datetime(1000, 1, 1, 0, 0, 0, 0),
                datetime.datetime(1000, 1, 1, 0, 0, 0),
                datetime.datetime(1970, 1, 1, 0, 0, 1),
                datetime.datetime(1970, 1, 1, 0, 0, 1, 500000),
            ),
            (
                datetime.date(9999, 12, 31),
                datetime.datetime(9999, 12, 31, 23, 59, 59, 999999),
                datetime.datetime(9999, 12, 31, 23, 59, 59),
                datetime.datetime(2038, 1, 19, 3, 14, 7),
                datetime.datetime(2038, 1, 19, 3, 14, 7, 999999),
            ),
        ]
        for i, row in enumerate(cases):
            self.cur.execute("INSERT INTO tm VALUES (%s, %s, %s, %s, %s, %s)", (i,) + row)
        for i, row in enumerate(cases):
            got = self.one("SELECT d, dt, dt0, ts, ts6 FROM tm WHERE id = %s", (i,))
            self.assertEqual(got, row, f"row {i}")
        # Strings are accepted too, and compared as dates.
        self.cur.execute("INSERT INTO tm (id, d, dt) VALUES (10, '2001-02-03', '2001-02-03 04:05:06.7')")
        self.assertEqual(
            self.one("SELECT d, dt FROM tm WHERE d BETWEEN '2001-01-01' AND '2001-12-31'"),
            (datetime.date(2001, 2, 3), datetime.datetime(2001, 2, 3, 4, 5, 6, 700000)),
        )
        # An invalid date in strict mode: 1292.
        with self.assertRaises(pymysql.err.MySQLError) as cm:
            self.cur.execute("INSERT INTO tm (id, d) VALUES (11, '2023-02-30')")
        self.assertEqual(cm.exception.args[0], 1292)
        self.cur.execute("DROP TABLE tm")


class TestLargeRows(Base):
    def test_long_values_round_trip_and_too_long_is_refused(self):
        # Off-page storage: a 20 KB and a 3 MB value go in and come back
        # byte for byte, through a parameter as well as a literal.
        self.cur.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB, s BLOB)")
        self.cur.execute("INSERT INTO big (id, b) VALUES (1, REPEAT('x', 20000))")
        blob = bytes(range(256)) * (3 * 4096)
        self.cur.execute("INSERT INTO big (id, b) VALUES (2, %s)", (blob,))
        self.assertEqual(self.one("SELECT LENGTH(b) FROM big WHERE id = 1"), (20000,))
        self.assertEqual(self.one("SELECT b FROM big WHERE id = 2"), (blob,))
        # Longer than the column's type (BLOB holds 65,535 bytes), strict
        # mode: 1406, nothing stored, and the connection keeps working.
        with self.assertRaises(pymysql.err.MySQLError) as cm:
            self.cur.execute("INSERT INTO big (id, s) VALUES (3, REPEAT('y', 70000))")
        self.assertEqual(cm.exception.args[0], 1406)
        self.assertEqual(self.one("SELECT COUNT(*) FROM big"), (2,))
        self.cur.execute("DROP TABLE big")


class TestErrors(Base):
    @classmethod
    def setUpClass(cls):
        c = connect()
        with c.cursor() as cur:
            cur.execute("CREATE TABLE errs (id INT PRIMARY KEY, u INT, UNIQUE KEY uk (u))")
            cur.execute("INSERT INTO errs VALUES (1, 10)")
        c.close()

    @classmethod
    def tearDownClass(cls):
        c = connect()
        with c.cursor() as cur:
            cur.execute("DROP TABLE errs")
        c.close()

    def test_duplicate_key(self):
        with self.assertRaises(pymysql.err.IntegrityError) as cm:
            self.cur.execute("INSERT INTO errs VALUES (1, 11)")
        self.assertEqual(cm.exception.args[0], 1062)
        self.assertEqual(cm.exception.args[1], "Duplicate entry '1' for key 'errs.PRIMARY'")
        with self.assertRaises(pymysql.err.IntegrityError) as cm:
            self.cur.execute("INSERT INTO errs VALUES (2, 10)")
        self.assertEqual(cm.exception.args[0], 1062)
        self.assertIn("'errs.uk'", cm.exception.args[1])
        # The connection is still usable and nothing was written.
        self.assertEqual(self.one("SELECT COUNT(*) FROM errs"), (1,))

    def test_no_such_table(self):
        with self.assertRaises(pymysql.err.ProgrammingError) as cm:
            self.cur.execute("SELECT * FROM no_such_table")
        self.assertEqual(cm.exception.args[0], 1146)
        self.assertEqual(cm.exception.args[1], f"Table '{DB}.no_such_table' doesn't exist")

    def test_syntax_error(self):
        with self.assertRaises(pymysql.err.ProgrammingError) as cm:
            self.cur.execute("SELEC 1")
        self.assertEqual(cm.exception.args[0], 1064)
        self.assertIn("You have an error in your SQL syntax", cm.exception.args[1])

    def test_unknown_column(self):
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.cur.execute("SELECT nope FROM errs")
        self.assertEqual(cm.exception.args[0], 1054)
        self.assertEqual(cm.exception.args[1], "Unknown column 'nope' in 'field list'")

    def test_other_errors(self):
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.cur.execute("USE no_such_db")
        self.assertEqual(cm.exception.args[0], 1049)
        with self.assertRaises(pymysql.err.IntegrityError) as cm:
            self.cur.execute("INSERT INTO errs (id, u) VALUES (NULL, 5)")
        self.assertEqual(cm.exception.args[0], 1048)
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.cur.execute("SELECT @@no_such_variable")
        self.assertEqual(cm.exception.args[0], 1193)
        self.assertEqual(self.one("SELECT 'still connected'"), ("still connected",))


class TestTransactions(Base):
    def setUp(self):
        super().setUp()
        self.cur.execute("DROP TABLE IF EXISTS acct")
        self.cur.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
        self.cur.execute("INSERT INTO acct VALUES (1, 100), (2, 0)")
        self.other = connect()

    def tearDown(self):
        self.other.close()
        self.cur.execute("DROP TABLE IF EXISTS acct")
        super().tearDown()

    def seen_by_other(self):
        with self.other.cursor() as c:
            c.execute("SELECT id, bal FROM acct ORDER BY id")
            return c.fetchall()

    def in_trans(self, conn):
        return bool(conn.server_status & SERVER_STATUS.SERVER_STATUS_IN_TRANS)

    def test_commit_visible_to_other_connection(self):
        self.conn.autocommit(False)
        self.assertFalse(self.conn.get_autocommit())
        self.cur.execute("UPDATE acct SET bal = bal - 30 WHERE id = 1")
        self.assertTrue(self.in_trans(self.conn))
        self.cur.execute("UPDATE acct SET bal = bal + 30 WHERE id = 2")
        self.cur.execute("INSERT INTO acct VALUES (3, 7)")
        # Not visible before COMMIT, visible to ourselves.
        self.assertEqual(self.seen_by_other(), ((1, 100), (2, 0)))
        self.assertEqual(self.all("SELECT id, bal FROM acct ORDER BY id"), ((1, 70), (2, 30), (3, 7)))
        self.conn.commit()
        self.assertFalse(self.in_trans(self.conn))
        self.assertEqual(self.seen_by_other(), ((1, 70), (2, 30), (3, 7)))

    def test_rollback(self):
        self.conn.autocommit(False)
        self.cur.execute("UPDATE acct SET bal = 0 WHERE id = 1")
        self.cur.execute("DELETE FROM acct WHERE id = 2")
        self.conn.rollback()
        self.assertFalse(self.in_trans(self.conn))
        self.assertEqual(self.seen_by_other(), ((1, 100), (2, 0)))
        self.assertEqual(self.all("SELECT id, bal FROM acct ORDER BY id"), ((1, 100), (2, 0)))

    def test_begin_and_autocommit_flag(self):
        self.assertTrue(self.conn.get_autocommit())
        self.cur.execute("BEGIN")
        self.assertTrue(self.in_trans(self.conn))
        self.cur.execute("INSERT INTO acct VALUES (9, 9)")
        self.assertEqual(len(self.seen_by_other()), 2)
        self.cur.execute("ROLLBACK")
        self.assertFalse(self.in_trans(self.conn))
        self.assertEqual(len(self.seen_by_other()), 2)
        # With autocommit on, every statement is visible at once.
        self.cur.execute("INSERT INTO acct VALUES (9, 9)")
        self.assertFalse(self.in_trans(self.conn))
        self.assertEqual(len(self.seen_by_other()), 3)

    def test_failed_statement_keeps_transaction(self):
        self.conn.autocommit(False)
        self.cur.execute("INSERT INTO acct VALUES (5, 5)")
        with self.assertRaises(pymysql.err.IntegrityError):
            self.cur.execute("INSERT INTO acct VALUES (1, 1)")
        self.assertTrue(self.in_trans(self.conn))
        self.conn.commit()
        self.assertEqual(self.seen_by_other(), ((1, 100), (2, 0), (5, 5)))

    def test_repeatable_read_snapshot(self):
        self.other.autocommit(False)
        with self.other.cursor() as c:
            c.execute("SELECT bal FROM acct WHERE id = 1")
            self.assertEqual(c.fetchone(), (100,))
            self.cur.execute("UPDATE acct SET bal = 1 WHERE id = 1")
            c.execute("SELECT bal FROM acct WHERE id = 1")
            self.assertEqual(c.fetchone(), (100,), "REPEATABLE READ snapshot")
            self.other.commit()
            c.execute("SELECT bal FROM acct WHERE id = 1")
            self.assertEqual(c.fetchone(), (1,))
            self.other.commit()


class TestLastInsertId(Base):
    def test_lastrowid(self):
        self.cur.execute("CREATE TABLE ai (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
        self.cur.execute("INSERT INTO ai (v) VALUES (%s)", ("a",))
        self.assertEqual(self.cur.lastrowid, 1)
        self.assertEqual(self.conn.insert_id(), 1)
        # A multi-row insert reports the first generated id.
        self.cur.executemany("INSERT INTO ai (v) VALUES (%s)", [("b",), ("c",), ("d",)])
        self.assertEqual(self.cur.lastrowid, 2)
        self.assertEqual(self.cur.rowcount, 3)
        self.assertEqual(self.one("SELECT LAST_INSERT_ID()"), (2,))
        # An explicit id moves the counter on.
        self.cur.execute("INSERT INTO ai VALUES (100, 'x')")
        self.cur.execute("INSERT INTO ai (v) VALUES ('y')")
        self.assertEqual(self.cur.lastrowid, 101)
        self.assertEqual(self.one("SELECT LAST_INSERT_ID(), MAX(id) FROM ai"), (101, 101))
        # LAST_INSERT_ID() is per connection.
        other = connect()
        with other.cursor() as c:
            c.execute("SELECT LAST_INSERT_ID()")
            self.assertEqual(c.fetchone(), (0,))
        other.close()
        self.cur.execute("DROP TABLE ai")


class TestAccounts(Base):
    USER = "pyuser"

    def setUp(self):
        super().setUp()
        self.cur.execute(f"DROP USER IF EXISTS '{self.USER}'@'%'")

    def tearDown(self):
        self.cur.execute(f"DROP USER IF EXISTS '{self.USER}'@'%'")
        super().tearDown()

    def login(self, password, **kw):
        # No default database: an account without privileges on it is
        # refused with 1044, as in MySQL (checked below).
        kw.setdefault("database", None)
        return connect(user=self.USER, password=password, **kw)

    def test_create_user_and_login(self):
        self.cur.execute(f"CREATE USER '{self.USER}'@'%' IDENTIFIED BY 's3cret pw'")
        # Kept in the grant tables, as MySQL does: no warning, and listed there.
        self.cur.execute("SHOW WARNINGS")
        self.assertEqual(len(self.cur.fetchall()), 0)
        self.cur.execute("SELECT User, Host FROM mysql.user WHERE User = %s", (self.USER,))
        self.assertEqual(self.cur.fetchall(), ((self.USER, "%"),))
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.cur.execute(f"CREATE USER '{self.USER}'@'%' IDENTIFIED BY 'x'")
        self.assertEqual(cm.exception.args, (1396, f"Operation CREATE USER failed for '{self.USER}'@'%'"))

        c = self.login("s3cret pw")
        with c.cursor() as cur:
            cur.execute("SELECT CURRENT_USER(), USER()")
            self.assertEqual(cur.fetchone(), (f"{self.USER}@%", f"{self.USER}@localhost"))
            cur.execute("SELECT 40 + 2")
            self.assertEqual(cur.fetchone(), (42,))
            # Without privileges: no account management.
            with self.assertRaises(pymysql.err.OperationalError) as cm:
                cur.execute("CREATE USER someone")
            self.assertEqual(cm.exception.args[0], 1227)
            cur.execute("SHOW GRANTS")
            self.assertEqual(cur.fetchall(), ((f"GRANT USAGE ON *.* TO `{self.USER}`@`%`",),))
        c.close()
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.login("s3cret pw", database=DB)
        self.assertEqual(cm.exception.args[0], 1044)

        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.login("wrong")
        self.assertEqual(cm.exception.args[0], 1045)
        self.assertEqual(
            cm.exception.args[1],
            f"Access denied for user '{self.USER}'@'localhost' (using password: YES)",
        )
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.login("")
        self.assertEqual(cm.exception.args[0], 1045)

    def test_grant_password_drop(self):
        self.cur.execute(f"CREATE USER {self.USER} IDENTIFIED BY 'one'")
        self.cur.execute(f"GRANT ALL PRIVILEGES ON {DB}.* TO '{self.USER}'@'%'")
        self.cur.execute(f"SHOW GRANTS FOR '{self.USER}'@'%'")
        self.assertIn((f"GRANT ALL PRIVILEGES ON `{DB}`.* TO `{self.USER}`@`%`",), self.cur.fetchall())
        self.cur.execute(f"ALTER USER '{self.USER}'@'%' IDENTIFIED BY 'two'")
        with self.assertRaises(pymysql.err.OperationalError):
            self.login("one")
        c = self.login("two")
        with c.cursor() as cur:
            cur.execute("SET PASSWORD = 'three'")
        c.close()
        self.login("three").close()
        self.cur.execute(f"GRANT ALL ON *.* TO '{self.USER}'@'%' WITH GRANT OPTION")
        c = self.login("three")
        with c.cursor() as cur:
            cur.execute("CREATE USER 'pyuser2'@'localhost'")
            cur.execute("SELECT User, Host FROM mysql.user WHERE User LIKE 'pyuser%' ORDER BY User")
            self.assertEqual(cur.fetchall(), ((self.USER, "%"), ("pyuser2", "localhost")))
            cur.execute("DROP USER 'pyuser2'@'localhost'")
        c.close()
        self.cur.execute(f"DROP USER '{self.USER}'@'%'")
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.login("three")
        self.assertEqual(cm.exception.args[0], 1045)
        with self.assertRaises(pymysql.err.OperationalError) as cm:
            self.cur.execute(f"DROP USER '{self.USER}'@'%'")
        self.assertEqual(cm.exception.args[0], 1396)


@unittest.skipIf(
    myconn is None and not REQUIRE_CONNECTOR,
    f"mysql-connector-python is not installed ({CONNECTOR_ERROR})",
)
class TestPreparedStatements(unittest.TestCase):
    """Server-side prepared statements through mysql-connector-python."""

    def setUp(self):
        if myconn is None:
            self.fail(f"mysql-connector-python is required: {CONNECTOR_ERROR}")
        self.conn = myconn.connect(
            host=HOST,
            port=PORT,
            user="root",
            password="",
            database=DB,
            use_pure=True,
            autocommit=True,
            connection_timeout=10,
        )
        self.cur = self.conn.cursor(prepared=True)

    def tearDown(self):
        self.cur.close()
        self.conn.close()

    def test_round_trip_every_type(self):
        cols = [
            ("ti", "TINYINT", -128),
            ("tiu", "TINYINT UNSIGNED", 255),
            ("si", "SMALLINT", -32768),
            ("mi", "MEDIUMINT", 8388607),
            ("i", "INT", -2147483648),
            ("iu", "INT UNSIGNED", 4294967295),
            ("bi", "BIGINT", -9223372036854775808),
            ("biu", "BIGINT UNSIGNED", 18446744073709551615),
            ("d", "DECIMAL(65,30)", Decimal("-" + "9" * 35 + "." + "9" * 30)),
            ("d2", "DECIMAL(10,2)", Decimal("-12345678.90")),
            ("f", "FLOAT", 1.5),
            ("db", "DOUBLE", 1.7976931348623157e308),
            ("c", "CHAR(10)", "héllo"),
            ("v", "VARCHAR(100)", "it's 🐬 \"q\" \\"),
            ("t", "TEXT", "t" * 1000),
            ("bl", "BLOB", BLOB_VALUE),
            ("dt", "DATE", datetime.date(1000, 1, 1)),
            ("dtm", "DATETIME(6)", datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)),
            ("ts", "TIMESTAMP NULL", datetime.datetime(2038, 1, 19, 3, 14, 7)),
        ]
        plain = self.conn.cursor()
        plain.execute("DROP TABLE IF EXISTS ps")
        plain.execute(
            "CREATE TABLE ps (id INT PRIMARY KEY, " + ", ".join(f"{n} {t}" for n, t, _ in cols) + ")"
        )
        names = ", ".join(n for n, _, _ in cols)
        marks = ", ".join(["%s"] * (len(cols) + 1))
        values = tuple(v for _, _, v in cols)
        self.cur.execute(f"INSERT INTO ps (id, {names}) VALUES ({marks})", (1,) + values)
        # The same statement again with NULLs everywhere.
        self.cur.execute(f"INSERT INTO ps (id, {names}) VALUES ({marks})", (2,) + (None,) * len(cols))
        self.cur.execute(f"SELECT {names} FROM ps WHERE id = %s", (1,))
        got = self.cur.fetchone()
        self.assertIsNone(self.cur.fetchone())
        for (n, _, want), have in zip(cols, got):
            if isinstance(have, (bytearray, bytes)) and isinstance(want, str):
                have = have.decode()
            if n == "f":
                self.assertAlmostEqual(have, want, places=5)
            else:
                self.assertEqual(have, want, n)
        self.cur.execute(f"SELECT {names} FROM ps WHERE id = %s", (2,))
        self.assertEqual(self.cur.fetchone(), (None,) * len(cols))
        # The text protocol sees the same values.
        plain.execute("SELECT bi, biu, d, bl FROM ps WHERE id = 1")
        bi, biu, d, bl = plain.fetchone()
        self.assertEqual((bi, biu, d), (-9223372036854775808, 18446744073709551615, values[8]))
        self.assertEqual(bytes(bl), BLOB_VALUE)
        plain.execute("DROP TABLE ps")
        plain.close()

    def test_reuse_and_where(self):
        plain = self.conn.cursor()
        plain.execute("DROP TABLE IF EXISTS psk")
        plain.execute("CREATE TABLE psk (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k))")

        def executes():
            plain.execute("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")
            return int(plain.fetchone()[1])

        before = executes()
        for i in range(1, 51):
            self.cur.execute("INSERT INTO psk VALUES (%s, %s, %s)", (i, i % 5, f"row{i}"))
        for k in range(5):
            self.cur.execute("SELECT COUNT(*), SUM(id) FROM psk WHERE k = %s", (k,))
            n, s = self.cur.fetchone()
            self.assertEqual(n, 10)
            self.assertEqual(int(s), sum(i for i in range(1, 51) if i % 5 == k))
        self.cur.execute("SELECT c FROM psk WHERE id BETWEEN %s AND %s ORDER BY id", (3, 5))
        self.assertEqual([r[0] for r in self.cur.fetchall()], ["row3", "row4", "row5"])
        self.cur.execute("UPDATE psk SET c = %s WHERE id = %s", ("changed", 7))
        self.assertEqual(self.cur.rowcount, 1)
        self.cur.execute("SELECT c FROM psk WHERE id = %s", (7,))
        self.assertEqual(self.cur.fetchone()[0], "changed")
        self.cur.execute("DELETE FROM psk WHERE k = %s", (0,))
        self.assertEqual(self.cur.rowcount, 10)
        # These went through COM_STMT_EXECUTE, not the text protocol.
        self.assertGreaterEqual(executes() - before, 50 + 5 + 1 + 1 + 1 + 1)
        plain.close()
        # Errors come back through the prepared path too.
        with self.assertRaises(myconn.errors.IntegrityError) as cm:
            self.cur.execute("INSERT INTO psk VALUES (%s, %s, %s)", (1, 1, "dup"))
        self.assertEqual(cm.exception.errno, 1062)
        self.assertEqual(cm.exception.sqlstate, "23000")
        with self.assertRaises(myconn.errors.ProgrammingError) as cm:
            self.cur.execute("SELECT * FROM no_such_table WHERE id = %s", (1,))
        self.assertEqual(cm.exception.errno, 1146)
        self.assertEqual(cm.exception.sqlstate, "42S02")

    def test_transactions_and_lastrowid(self):
        plain = self.conn.cursor()
        plain.execute("DROP TABLE IF EXISTS pst")
        plain.execute("CREATE TABLE pst (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
        self.cur.execute("INSERT INTO pst (v) VALUES (%s)", (1,))
        self.assertEqual(self.cur.lastrowid, 1)
        self.conn.start_transaction()
        self.assertTrue(self.conn.in_transaction)
        self.cur.execute("INSERT INTO pst (v) VALUES (%s)", (2,))
        self.assertEqual(self.cur.lastrowid, 2)
        self.conn.rollback()
        self.assertFalse(self.conn.in_transaction)
        plain.execute("SELECT COUNT(*) FROM pst")
        self.assertEqual(plain.fetchone()[0], 1)
        plain.execute("DROP TABLE pst")
        plain.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
