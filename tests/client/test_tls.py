"""TLS and authentication against `quire serve`, from real clients.

tests/client/run.sh starts the server and sets QUIRE_DATADIR (where the
server generated ca.pem, client-cert.pem, ... on its first start).

* PyMySQL with `ssl_ca` and full verification (certificate chain and host
  name 127.0.0.1 / localhost): Ssl_version / Ssl_cipher, caching_sha2_password
  full authentication in clear over TLS, then the fast path; over plain TCP
  the RSA public-key exchange (PyMySQL uses `cryptography`); REQUIRE SSL and
  REQUIRE X509 (client certificate); ACCOUNT LOCK (3118), FAILED_LOGIN_ATTEMPTS
  (3955), PASSWORD EXPIRE (1862 for a client that cannot handle it).
* mysql-connector-python over TLS with a verified CA, logging in to a
  caching_sha2_password account.
* The `mariadb` command-line client (MariaDB Connector/C) with
  `--ssl --ssl-verify-server-cert --ssl-ca=DATADIR/ca.pem`, as root and as
  a caching_sha2_password account (the client loads its
  caching_sha2_password plugin for the switch).
"""

import os
import shutil
import subprocess
import unittest

import pymysql
import pymysql.err

try:
    import mysql.connector as myconn
except Exception:  # pragma: no cover - depends on the environment
    myconn = None

HOST = os.environ.get("QUIRE_HOST", "127.0.0.1")
PORT = int(os.environ.get("QUIRE_PORT", "3306"))
DATADIR = os.environ.get("QUIRE_DATADIR", "")
REQUIRE_CONNECTOR = os.environ.get("QUIRE_REQUIRE_CONNECTOR") == "1"


def ca():
    return os.path.join(DATADIR, "ca.pem")


def connect(user="root", password="", tls=True, cert=False, **kw):
    if tls:
        kw.update(ssl_ca=ca(), ssl_verify_cert=True, ssl_verify_identity=True)
        if cert:
            kw.update(
                ssl_cert=os.path.join(DATADIR, "client-cert.pem"),
                ssl_key=os.path.join(DATADIR, "client-key.pem"),
            )
    else:
        # PyMySQL 1.1 uses TLS whenever the server offers it.
        kw.setdefault("ssl_disabled", True)
    return pymysql.connect(
        host=HOST,
        port=PORT,
        user=user,
        password=password,
        connect_timeout=10,
        autocommit=True,
        **kw,
    )


def status(conn, name):
    with conn.cursor() as cur:
        cur.execute(f"SHOW STATUS LIKE '{name}'")
        rows = cur.fetchall()
    return rows[0][1] if rows else None


def run(root, sql):
    with root.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


@unittest.skipUnless(DATADIR, "QUIRE_DATADIR not set (run tests/client/run.sh)")
class TestTls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = connect(tls=False)
        for u in ("t_sha", "t_ssl", "t_x509", "t_lock", "t_fail", "t_exp", "t_cli"):
            run(cls.root, f"DROP USER IF EXISTS '{u}'@'%'")

    @classmethod
    def tearDownClass(cls):
        cls.root.close()

    def test_verified_tls_and_session_status(self):
        c = connect()
        self.assertIn(status(c, "Ssl_version"), ("TLSv1.2", "TLSv1.3"))
        self.assertTrue(status(c, "Ssl_cipher"))
        c.close()
        plain = connect(tls=False)
        self.assertEqual(status(plain, "Ssl_version"), "")
        plain.close()
        # A CA that did not sign the server certificate is refused.
        with self.assertRaises(pymysql.err.OperationalError):
            connect(ssl_ca=os.path.join(DATADIR, "client-cert.pem"),
                    ssl_verify_cert=True, ssl_disabled=False, tls=False)

    def test_caching_sha2_full_fast_and_rsa(self):
        run(self.root, "CREATE USER 't_sha'@'%' IDENTIFIED BY 'sha-pw'")
        rows = run(self.root, "SELECT plugin FROM mysql.user WHERE User = 't_sha'")
        self.assertEqual(rows[0][0], "caching_sha2_password")
        # Plain TCP, empty cache: RSA key exchange (cryptography).
        c = connect("t_sha", "sha-pw", tls=False)
        self.assertEqual(run(c, "SELECT CURRENT_USER()")[0][0], "t_sha@%")
        c.close()
        # Cached now: the fast path works without TLS or RSA.
        connect("t_sha", "sha-pw", tls=False).close()
        run(self.root, "FLUSH PRIVILEGES")
        # Full authentication in clear inside TLS.
        connect("t_sha", "sha-pw").close()
        with self.assertRaises(pymysql.err.OperationalError) as e:
            connect("t_sha", "wrong")
        self.assertEqual(e.exception.args[0], 1045)

    def test_require_ssl_and_x509(self):
        run(self.root, "CREATE USER 't_ssl'@'%' IDENTIFIED BY 'p' REQUIRE SSL")
        run(self.root, "CREATE USER 't_x509'@'%' IDENTIFIED BY 'p' REQUIRE X509")
        with self.assertRaises(pymysql.err.OperationalError) as e:
            connect("t_ssl", "p", tls=False)
        self.assertEqual(e.exception.args[0], 1045)
        connect("t_ssl", "p").close()
        with self.assertRaises(pymysql.err.OperationalError) as e:
            connect("t_x509", "p")
        self.assertEqual(e.exception.args[0], 1045)
        connect("t_x509", "p", cert=True).close()

    def test_lock_failed_logins_expire(self):
        run(self.root, "CREATE USER 't_lock'@'%' IDENTIFIED BY 'p' ACCOUNT LOCK")
        with self.assertRaises(pymysql.err.OperationalError) as e:
            connect("t_lock", "p")
        self.assertEqual(e.exception.args[0], 3118)
        run(self.root, "ALTER USER 't_lock'@'%' ACCOUNT UNLOCK")
        connect("t_lock", "p").close()
        run(self.root, "CREATE USER 't_fail'@'%' IDENTIFIED BY 'p' "
                       "FAILED_LOGIN_ATTEMPTS 2 PASSWORD_LOCK_TIME UNBOUNDED")
        codes = []
        for pw in ("x", "y", "p"):
            try:
                connect("t_fail", pw).close()
                codes.append(0)
            except pymysql.err.OperationalError as e:
                codes.append(e.args[0])
        self.assertEqual(codes, [1045, 3955, 3955])
        run(self.root, "CREATE USER 't_exp'@'%' IDENTIFIED BY 'p' PASSWORD EXPIRE")
        with self.assertRaises(pymysql.err.OperationalError) as e:
            connect("t_exp", "p")
        self.assertEqual(e.exception.args[0], 1862)

    @unittest.skipIf(myconn is None and not REQUIRE_CONNECTOR, "mysql-connector-python missing")
    def test_connector_python_over_tls(self):
        run(self.root, "CREATE USER IF NOT EXISTS 't_cli'@'%' IDENTIFIED BY 'cli-pw'")
        c = myconn.connect(host=HOST, port=PORT, user="t_cli", password="cli-pw",
                           ssl_ca=ca(), ssl_verify_cert=True, use_pure=True,
                           connection_timeout=10)
        cur = c.cursor()
        cur.execute("SHOW STATUS LIKE 'Ssl_version'")
        self.assertIn(cur.fetchall()[0][1], ("TLSv1.2", "TLSv1.3"))
        cur.execute("SELECT CURRENT_USER()")
        self.assertEqual(cur.fetchall()[0][0], "t_cli@%")
        c.close()

    @unittest.skipUnless(shutil.which("mariadb"), "mariadb client not installed")
    def test_mariadb_client_verifies_the_server(self):
        run(self.root, "CREATE USER IF NOT EXISTS 't_cli'@'%' IDENTIFIED BY 'cli-pw'")
        base = ["mariadb", f"-h{HOST}", f"-P{PORT}", "--ssl", "--ssl-verify-server-cert",
                f"--ssl-ca={ca()}", "-N", "-e",
                "SHOW STATUS LIKE 'Ssl_version'; SELECT CURRENT_USER()"]
        for user, pw in (("root", None), ("t_cli", "cli-pw")):
            args = base[:1] + [f"-u{user}"] + ([f"-p{pw}"] if pw else []) + base[1:]
            out = subprocess.run(args, capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertRegex(out.stdout, r"Ssl_version\tTLSv1\.[23]")
            self.assertIn(f"{user}@", out.stdout)
        # A wrong CA: the client refuses the server.
        args = ["mariadb", f"-h{HOST}", f"-P{PORT}", "-uroot", "--ssl",
                "--ssl-verify-server-cert",
                f"--ssl-ca={os.path.join(DATADIR, 'client-cert.pem')}", "-e", "SELECT 1"]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)


if __name__ == "__main__":
    unittest.main()
