// TLS and authentication against `quire serve` from node's mysql2 driver.
//
// tests/client/run.sh starts the server, installs mysql2 with npm (outside
// the source tree's tracked files) and runs this file with NODE_PATH set,
// QUIRE_HOST / QUIRE_PORT / QUIRE_DATADIR in the environment.
//
// * TLS with `ssl: { ca: DATADIR/ca.pem }` (mysql2 verifies the chain and
//   the host name, 127.0.0.1 here): a caching_sha2_password account takes
//   the full authentication in clear inside TLS; Ssl_version / Ssl_cipher
//   are set; text queries and server-side prepared statements
//   (`execute`, `LIMIT ?` bound to a number and to a string). The same connection options with the
//   system CAs only are refused (the verification really happens).
// * Plain TCP to a caching_sha2_password account with a cold cache: the
//   RSA public-key exchange; again: the fast path.
// * Plain TCP to a mysql_native_password account; a wrong password is
//   1045 (ER_ACCESS_DENIED_ERROR).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const mysql = require('mysql2/promise');

const HOST = process.env.QUIRE_HOST || '127.0.0.1';
const PORT = Number(process.env.QUIRE_PORT || '3306');
const DATADIR = process.env.QUIRE_DATADIR || '';
// QUIRE_MYSQL2_ONLY=execute runs only the tests whose name has that word,
// with no accounts or TLS (QUIRE_DATADIR unset): the way to run the
// statement tests against another server (MariaDB) too.
const ONLY = process.env.QUIRE_MYSQL2_ONLY || '';
const CA = DATADIR ? fs.readFileSync(path.join(DATADIR, 'ca.pem')) : null;
const TLS = CA ? { ca: CA } : undefined;

function connect(opts) {
  return mysql.createConnection({
    host: HOST,
    port: PORT,
    connectTimeout: 10000,
    ...opts,
  });
}

async function one(conn, sql, params) {
  const [rows] = await conn.query(sql, params);
  return Object.values(rows[0])[0];
}

async function status(conn, name) {
  const [rows] = await conn.query(`SHOW SESSION STATUS LIKE '${name}'`);
  assert.equal(rows.length, 1, `${name} is a status variable`);
  return rows[0].Value;
}

async function refused(opts, code) {
  let conn;
  try {
    conn = await connect(opts);
  } catch (e) {
    if (code !== undefined) assert.equal(e.code, code, `${e}`);
    return e;
  }
  await conn.end();
  assert.fail(`the connection was accepted: ${JSON.stringify({ ...opts, ssl: !!opts.ssl })}`);
}

const tests = [];
function test(name, fn) {
  tests.push([name, fn]);
}

test('caching_sha2_password over TLS with a verified CA', async () => {
  const c = await connect({ user: 'm2sha', password: 'sha-pw', database: 'm2db', ssl: { ca: CA } });
  try {
    assert.equal(await one(c, 'SELECT CURRENT_USER()'), 'm2sha@%');
    assert.match(await status(c, 'Ssl_version'), /^TLSv1\.[23]$/);
    assert.notEqual(await status(c, 'Ssl_cipher'), '');
    // Text protocol, with client-side placeholders.
    await c.query('INSERT INTO t (id, v) VALUES (?, ?), (?, ?), (?, ?)', [1, 'one', 2, 'two', 3, null]);
    const [rows] = await c.query('SELECT id, v FROM t ORDER BY id');
    assert.deepEqual(rows.map((r) => [r.id, r.v]), [[1, 'one'], [2, 'two'], [3, null]]);
    // Server-side prepared statements (COM_STMT_PREPARE / EXECUTE).
    const before = Number(await status(c, 'Com_stmt_execute'));
    const [lim] = await c.execute('SELECT id, v FROM t WHERE id >= ? AND id <= ? ORDER BY id LIMIT 2', [1, 3]);
    assert.deepEqual(lim.map((r) => [r.id, r.v]), [[1, 'one'], [2, 'two']]);
    // `LIMIT ?` bound to a JS number (mysql2 sends it as a double) and
    // `OFFSET ?` bound to a string.
    const [page] = await c.execute('SELECT id FROM t ORDER BY id LIMIT ? OFFSET ?', [2, '1']);
    assert.deepEqual(page.map((r) => r.id), [2, 3]);
    const [byV] = await c.execute('SELECT id FROM t WHERE v = ?', ['two']);
    assert.deepEqual(byV.map((r) => r.id), [2]);
    const [nul] = await c.execute('SELECT id FROM t WHERE v IS NULL AND id > ?', [0]);
    assert.deepEqual(nul.map((r) => r.id), [3]);
    const [upd] = await c.execute('UPDATE t SET v = ? WHERE id = ?', ['three', 3]);
    assert.equal(upd.affectedRows, 1);
    assert.equal(await one(c, 'SELECT v FROM t WHERE id = 3'), 'three');
    assert.ok(Number(await status(c, 'Com_stmt_execute')) >= before + 4, 'executions were counted');
  } finally {
    await c.end();
  }
  // The same options without our CA: the server's certificate is not
  // trusted, so mysql2 must refuse it.
  const e = await refused({ user: 'm2sha', password: 'sha-pw', ssl: {} });
  assert.match(`${e.code} ${e.message}`, /CERT|certificate/i);
});

test('caching_sha2_password without TLS: RSA exchange, then the fast path', async () => {
  for (const round of ['rsa', 'fast']) {
    const c = await connect({ user: 'm2rsa', password: 'rsa-pw' });
    try {
      assert.equal(await one(c, 'SELECT CURRENT_USER()'), 'm2rsa@%', round);
      assert.equal(await status(c, 'Ssl_version'), '', round);
      assert.equal(await one(c, 'SELECT ? + 1', [41]), 42);
    } finally {
      await c.end();
    }
  }
  await refused({ user: 'm2rsa', password: 'wrong' }, 'ER_ACCESS_DENIED_ERROR');
});

test('mysql_native_password without TLS', async () => {
  const c = await connect({ user: 'm2nat', password: 'nat-pw', database: 'm2db' });
  try {
    assert.equal(await one(c, 'SELECT CURRENT_USER()'), 'm2nat@%');
    assert.equal(await status(c, 'Ssl_version'), '');
    const [rows] = await c.execute('SELECT COUNT(*) AS n FROM t WHERE id < ?', [10]);
    assert.equal(Number(rows[0].n), 3);
  } finally {
    await c.end();
  }
  await refused({ user: 'm2nat', password: 'wrong' }, 'ER_ACCESS_DENIED_ERROR');
});

test('execute: placeholders in LIMIT and the other places MySQL takes them', async () => {
  const c = await connect({ user: 'root', password: '', database: 'm2db', ssl: TLS });
  try {
    await c.query('CREATE TABLE p (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), grp INT, price DECIMAL(8,2), at DATETIME, data BLOB)');
    const ins = 'INSERT INTO p (name, grp, price, at, data) VALUES (?, ?, ?, ?, ?)';
    for (let i = 1; i <= 8; i++) {
      const [r] = await c.execute(ins, [`n${i}`, i % 3, `${i}.50`, new Date(2001, 0, i, 12, 30, 0), Buffer.from([0, i, 255])]);
      assert.equal(r.affectedRows, 1);
      assert.equal(r.insertId, i);
    }
    const ids = async (sql, params) => (await c.execute(sql, params))[0].map((r) => r.id);
    // One prepared statement (mysql2 caches it), executed with other limits.
    for (const n of [0, 1, 3, 100]) {
      assert.deepEqual(await ids('SELECT id FROM p ORDER BY id LIMIT ?', [n]), [1, 2, 3, 4, 5, 6, 7, 8].slice(0, n), `LIMIT ${n}`);
    }
    assert.deepEqual(await ids('SELECT id FROM p ORDER BY id LIMIT ?, ?', [2, 3]), [3, 4, 5]);
    assert.deepEqual(await ids('SELECT id FROM p ORDER BY id LIMIT ?, ?', ['6', '5']), [7, 8], 'strings');
    assert.deepEqual(await ids('SELECT id FROM p WHERE grp = ? ORDER BY id DESC LIMIT ? OFFSET ?', [1, 2, 1]), [4, 1]);
    assert.deepEqual(await ids('SELECT id FROM p ORDER BY id LIMIT ?', [BigInt(2)]), [1, 2], 'BigInt');
    // A derived table's LIMIT, UNION ... LIMIT, IN lists, HAVING.
    assert.deepEqual(await ids('SELECT d.id FROM (SELECT id FROM p ORDER BY id DESC LIMIT ?) AS d ORDER BY d.id', [2]), [7, 8]);
    assert.deepEqual(await ids('(SELECT id FROM p WHERE id < ?) UNION (SELECT id FROM p WHERE id > ?) ORDER BY id LIMIT ?', [3, 6, 3]), [1, 2, 7]);
    assert.deepEqual(await ids('SELECT id FROM p WHERE id IN (?, ?, ?) ORDER BY id', [5, 1, 99]), [1, 5]);
    const [groups] = await c.execute('SELECT grp, COUNT(*) AS n FROM p GROUP BY grp HAVING COUNT(*) > ? ORDER BY grp', [2]);
    assert.deepEqual(groups.map((r) => [r.grp, r.n]), [[1, 3], [2, 3]]);
    // The select list, functions, CASE, LIKE, dates, NULL.
    const [[row]] = await c.execute(
      "SELECT ? + 1 AS a, CONCAT(?, name) AS b, CASE WHEN grp = ? THEN 'y' ELSE 'n' END AS c, name LIKE ? AS d, at >= ? AS e, ? IS NULL AS f FROM p WHERE id = ?",
      [41, 'pre-', 2, 'n%', new Date(2001, 0, 2), null, 2]);
    assert.deepEqual({ ...row }, { a: 42, b: 'pre-n2', c: 'y', d: 1, e: 1, f: 1 });
    const [[back]] = await c.execute('SELECT price, at, data FROM p WHERE name = ?', ['n3']);
    assert.equal(back.price, '3.50');
    assert.equal(back.at.getTime(), new Date(2001, 0, 3, 12, 30, 0).getTime());
    assert.deepEqual([...back.data], [0, 3, 255]);
    // Prepared UPDATE ... LIMIT ? and DELETE: affected rows.
    const [u] = await c.execute('UPDATE p SET price = price + ?, name = CONCAT(name, ?) WHERE grp = ? ORDER BY id LIMIT ?', [10, '!', 0, 1]);
    assert.equal(u.affectedRows, 1);
    assert.equal(await one(c, 'SELECT name FROM p WHERE price > 10'), 'n3!');
    const [d] = await c.execute('DELETE FROM p WHERE id > ? ORDER BY id LIMIT ?', [5, 2]);
    assert.equal(d.affectedRows, 2);
    assert.deepEqual(await ids('SELECT id FROM p ORDER BY id', []), [1, 2, 3, 4, 5, 8]);
    // Metadata of a prepared statement (COM_STMT_PREPARE's answer).
    const stmt = await c.prepare('SELECT id, name FROM p WHERE grp = ? LIMIT ?');
    assert.equal(stmt.statement.parameters.length, 2);
    assert.deepEqual(stmt.statement.columns.map((f) => f.name), ['id', 'name']);
    const [viaStmt] = await stmt.execute([1, 1]);
    assert.deepEqual(viaStmt.map((r) => r.id), [1]);
    await stmt.close();
  } finally {
    await c.end();
  }
});

async function main() {
  const root = await connect({ user: 'root', password: '', ssl: TLS });
  const chosen = tests.filter(([name]) => name.includes(ONLY));
  const setup = [
    'DROP DATABASE IF EXISTS m2db',
    'CREATE DATABASE m2db',
    'CREATE TABLE m2db.t (id INT PRIMARY KEY, v VARCHAR(20))',
  ];
  const accounts = [
    "DROP USER IF EXISTS 'm2sha'@'%', 'm2rsa'@'%', 'm2nat'@'%'",
    "CREATE USER 'm2sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
    "CREATE USER 'm2rsa'@'%' IDENTIFIED WITH caching_sha2_password BY 'rsa-pw'",
    "CREATE USER 'm2nat'@'%' IDENTIFIED WITH mysql_native_password BY 'nat-pw'",
    "GRANT ALL ON m2db.* TO 'm2sha'@'%'",
    "GRANT ALL ON m2db.* TO 'm2nat'@'%'",
  ];
  let failed = 0;
  try {
    for (const sql of ONLY ? setup : setup.concat(accounts)) await root.query(sql);
    for (const [name, fn] of chosen) {
      try {
        await fn();
        console.log(`ok   ${name}`);
      } catch (e) {
        failed += 1;
        console.log(`FAIL ${name}\n${e && e.stack ? e.stack : e}`);
      }
    }
  } finally {
    if (!ONLY) await root.query("DROP USER IF EXISTS 'm2sha'@'%', 'm2rsa'@'%', 'm2nat'@'%'");
    await root.query('DROP DATABASE IF EXISTS m2db');
    await root.end();
  }
  console.log(`mysql2 ${require('mysql2/package.json').version}: ${chosen.length - failed} of ${chosen.length} passed`);
  console.log(`mysql2: ${chosen.length - failed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
