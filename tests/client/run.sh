#!/usr/bin/env bash
# Client integration test: builds quire, starts `quire serve` on a fresh
# data directory and a free port, and runs real client libraries against it:
#   * tests/client/test_pymysql.py (PyMySQL for the text protocol,
#     mysql-connector-python for server-side prepared statements),
#   * tests/client/test_tls.py (TLS against the generated CA with PyMySQL,
#     mysql-connector-python and the mariadb client; caching_sha2_password;
#     account options),
#   * tests/client/test_sqlalchemy.py (the SQLAlchemy 2.x ORM through
#     PyMySQL and mysql-connector-python),
#   * tests/client/test_django.py (Django's ORM and migrations through
#     mysqlclient),
#   * tests/client/test_mysql2.js (node's mysql2: TLS with a verified CA,
#     caching_sha2_password over TLS and with RSA, mysql_native_password,
#     `execute` with `LIMIT ?` and other placeholders),
#   * tests/client/test_dbd_mariadb.pl (Perl DBI + DBD::MariaDB with
#     mariadb_server_prepare=1, under prove),
# stops the server with SIGTERM (it must exit 0), and runs `quire check` on
# the data directory it left.
#
#   tests/client/run.sh                       # everything
#   tests/client/run.sh test_pymysql.TestAccounts   # unittest names only
#   tests/client/run.sh mysql2                # only the node test
#   tests/client/run.sh perl                  # only the Perl test
#
# Installs what is missing: with pip, pymysql, cryptography (PyMySQL's RSA
# exchange for caching_sha2_password), mysql-connector-python, SQLAlchemy 2,
# Django 5 and mysqlclient (built from source: needs libmariadb-dev and
# pkg-config); with apt-get, the mariadb client, libmariadb-dev, pkg-config
# and libdbd-mariadb-perl; with npm, mysql2 into $QUIRE_NODE_DIR (default
# target/node-client, ignored by git; reused when present). Without
# node/npm the mysql2 test fails unless QUIRE_SKIP_NODE=1.
# Honours CARGO_TARGET_DIR. QUIRE_CLIENT_SKIP_BUILD=1 skips the cargo build.
# Exits non-zero on any failure (build, start-up, a test, an unclean
# shutdown, a failed check).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
QUIRE=$TARGET/release/quire

log() { echo "client-test: $*" >&2; }

if [ "${QUIRE_CLIENT_SKIP_BUILD:-0}" != 1 ]; then
    log "cargo build --release"
    cargo build --release
fi
[ -x "$QUIRE" ] || { log "no binary at $QUIRE"; exit 1; }

need_apt() { # command-or-file-test package...
    if ! eval "$1" 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
        shift
        log "installing $*"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null ||
            log "could not install $*"
    fi
}
need_apt "command -v mariadb" mariadb-client
need_apt "perl -MDBD::MariaDB -e1" libdbd-mariadb-perl
need_apt "pkg-config --exists libmariadb" libmariadb-dev pkg-config

need_py() { # module pip-requirement
    if ! python3 -c "import $1" 2>/dev/null; then
        log "installing $2"
        python3 -m pip install --quiet --disable-pip-version-check "$2" ||
            python3 -m pip install --quiet --disable-pip-version-check --user "$2" ||
            python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$2"
    fi
    python3 -c "import $1"
}
need_py pymysql pymysql
need_py mysql.connector mysql-connector-python
need_py cryptography cryptography
need_py sqlalchemy "sqlalchemy>=2.0,<2.2"
need_py MySQLdb "mysqlclient>=2.2"
need_py django "django>=5.2,<6.1"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/quire-client-test.XXXXXX")
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SERVER_PID=
STATUS=1

cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "$STATUS" != 0 ] && [ -f "$DIR/server.log" ]; then
        log "server log ($DIR/server.log):"
        tail -n 50 "$DIR/server.log" >&2 || true
        log "data directory kept at $DIR"
    else
        rm -rf "$DIR"
    fi
}
trap cleanup EXIT

log "starting $QUIRE serve --datadir=$DIR/data --port=$PORT"
"$QUIRE" serve --datadir="$DIR/data" --port="$PORT" --bind-address=127.0.0.1 \
    --innodb-buffer-pool-size=64M >"$DIR/server.log" 2>&1 &
SERVER_PID=$!

# Wait until it accepts connections (or dies).
for _ in $(seq 1 600); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        log "the server exited during start-up"
        exit 1
    fi
    if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $PORT), 0.5).close()" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1).close()" || {
    log "the server did not accept connections on port $PORT within 60 s"
    exit 1
}

RUN_NODE=1
RUN_PERL=1
if [ $# -eq 0 ]; then
    set -- test_pymysql test_tls test_sqlalchemy test_django
elif [ "$*" = mysql2 ]; then
    set --
    RUN_PERL=0
elif [ "$*" = perl ]; then
    set --
    RUN_NODE=0
else
    RUN_NODE=0
    RUN_PERL=0
fi
TESTS=0
if [ $# -gt 0 ]; then
    log "running $* against 127.0.0.1:$PORT"
    set +e
    (cd "$ROOT/tests/client" &&
        QUIRE_HOST=127.0.0.1 QUIRE_PORT=$PORT QUIRE_REQUIRE_CONNECTOR=1 \
            QUIRE_DATADIR="$DIR/data" python3 -m unittest -v "$@")
    TESTS=$?
    set -e
fi
if [ "$RUN_NODE" = 1 ] && [ "${QUIRE_SKIP_NODE:-0}" != 1 ]; then
    NODE_DIR=${QUIRE_NODE_DIR:-$TARGET/node-client}
    set +e
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        log "node and npm are needed for test_mysql2.js (QUIRE_SKIP_NODE=1 skips it)"
        TESTS=1
    elif [ ! -f "$NODE_DIR/node_modules/mysql2/package.json" ] &&
        ! { log "installing mysql2 into $NODE_DIR" &&
            mkdir -p "$NODE_DIR" &&
            npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent mysql2@3 >&2; }; then
        log "npm install mysql2 failed"
        TESTS=1
    else
        log "running test_mysql2.js against 127.0.0.1:$PORT"
        NODE_PATH="$NODE_DIR/node_modules" QUIRE_HOST=127.0.0.1 QUIRE_PORT=$PORT \
            QUIRE_DATADIR="$DIR/data" node "$ROOT/tests/client/test_mysql2.js" || TESTS=1
    fi
    set -e
fi

if [ "$RUN_PERL" = 1 ]; then
    log "running test_dbd_mariadb.pl against 127.0.0.1:$PORT"
    QUIRE_HOST=127.0.0.1 QUIRE_PORT=$PORT prove -v "$ROOT/tests/client/test_dbd_mariadb.pl" || TESTS=1
fi

log "stopping the server (SIGTERM)"
kill -TERM "$SERVER_PID"
SERVER_EXIT=0
for _ in $(seq 1 600); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$SERVER_PID" 2>/dev/null; then
    log "the server did not stop within 60 s of SIGTERM"
    exit 1
fi
wait "$SERVER_PID" || SERVER_EXIT=$?
SERVER_PID=
if [ "$SERVER_EXIT" != 0 ]; then
    log "the server exited with status $SERVER_EXIT after SIGTERM"
    exit 1
fi

log "quire check --datadir=$DIR/data"
CHECK=0
"$QUIRE" check --datadir="$DIR/data" >"$DIR/check.log" 2>&1 || CHECK=$?
if [ "$CHECK" != 0 ]; then
    cat "$DIR/check.log" >&2
    log "quire check failed ($CHECK)"
    exit 1
fi

if [ "$TESTS" != 0 ]; then
    log "FAILED (a client test failed: status $TESTS)"
    exit 1
fi
STATUS=0
log "OK"
