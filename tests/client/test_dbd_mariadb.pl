#!/usr/bin/perl
# Perl's DBI with DBD::MariaDB against `quire serve`, server-side prepared
# statements on (mariadb_server_prepare=1: COM_STMT_PREPARE / EXECUTE with
# binary parameters and rows).
#
# tests/client/run.sh runs it (Debian's libdbd-mariadb-perl; TAP output);
# QUIRE_HOST / QUIRE_PORT point it at any server, e.g. MariaDB 10.11 to
# prove the expectations: QUIRE_PORT=3437 perl tests/client/test_dbd_mariadb.pl
#
# Covered: `LIMIT ?`, `LIMIT ?, ?` and `LIMIT ? OFFSET ?` bound as
# integers (SQL_INTEGER) and as strings (DBD's default type), one prepared
# statement executed with different limits; placeholders in the select
# list, WHERE, IN lists, a derived table's LIMIT, HAVING, UNION ... LIMIT;
# prepared INSERT / UPDATE / DELETE with affected-row counts, NULL, DECIMAL,
# DATE and BLOB parameters, the insert id; the statement's metadata
# (NUM_OF_PARAMS, NAME); errors (1062); a transaction rolled back.
use strict;
use warnings;
use DBI qw(:sql_types);
use Test::More;

my $host = $ENV{QUIRE_HOST} // '127.0.0.1';
my $port = $ENV{QUIRE_PORT} // 3306;
my $db   = 'perl_dbd';

my $root = DBI->connect("DBI:MariaDB:host=$host;port=$port", 'root', '',
    { RaiseError => 1, PrintError => 0, AutoCommit => 1 });
$root->do("DROP DATABASE IF EXISTS $db");
$root->do("CREATE DATABASE $db");

my $dbh = DBI->connect(
    "DBI:MariaDB:database=$db;host=$host;port=$port;mariadb_server_prepare=1",
    'root', '', { RaiseError => 1, PrintError => 0, AutoCommit => 1 });
ok($dbh->{mariadb_server_prepare}, 'server-side prepare is on');

sub status {
    my ($name) = @_;
    my (undef, $v) = $dbh->selectrow_array("SHOW SESSION STATUS LIKE '$name'");
    return $v;
}
my $prepared_before = status('Com_stmt_prepare');

$dbh->do('CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL UNIQUE,'
    . ' price DECIMAL(8,2), born DATE, data BLOB, grp INT)');

# Prepared INSERT, executed once per row.
my $ins = $dbh->prepare('INSERT INTO t (name, price, born, data, grp) VALUES (?, ?, ?, ?, ?)');
is($ins->{NUM_OF_PARAMS}, 5, 'NUM_OF_PARAMS of the INSERT');
for my $i (1 .. 8) {
    $ins->bind_param(4, undef, SQL_BLOB);  # the type sticks for execute's values
    is($ins->execute("n$i", sprintf('%d.25', $i), sprintf('2001-01-%02d', $i), "b\0$i\xff", $i % 3), 1, "insert n$i");
}
is($dbh->last_insert_id(undef, undef, 't', 'id'), 8, 'last_insert_id');
is($ins->{mariadb_insertid}, 8, 'mariadb_insertid');

# LIMIT ? with integers; the same statement with other limits.
my $lim = $dbh->prepare('SELECT id, name FROM t ORDER BY id LIMIT ?');
is($lim->{NUM_OF_PARAMS}, 1, 'NUM_OF_PARAMS of SELECT ... LIMIT ?');
for my $n (0, 1, 3, 100) {
    $lim->bind_param(1, $n, SQL_INTEGER);
    $lim->execute;
    my $rows = $lim->fetchall_arrayref;
    is(scalar(@$rows), $n > 8 ? 8 : $n, "LIMIT $n returns that many rows");
}
is_deeply($lim->{NAME}, ['id', 'name'], 'column names of the prepared SELECT');

# LIMIT ?, ? and LIMIT ? OFFSET ?, bound with DBD's default (string) type.
is_deeply($dbh->selectcol_arrayref('SELECT id FROM t ORDER BY id LIMIT ?, ?', undef, 2, 3),
    [3, 4, 5], 'LIMIT ?, ? (strings)');
is_deeply($dbh->selectcol_arrayref('SELECT id FROM t ORDER BY id DESC LIMIT ? OFFSET ?', undef, 2, 1),
    [7, 6], 'LIMIT ? OFFSET ?');
my $page = $dbh->prepare('SELECT name FROM t WHERE grp = ? ORDER BY id LIMIT ? OFFSET ?');
$page->bind_param(1, 1, SQL_INTEGER);
$page->bind_param(2, 2, SQL_INTEGER);
$page->bind_param(3, 1, SQL_INTEGER);
$page->execute;
is_deeply([map { $_->[0] } @{ $page->fetchall_arrayref }], ['n4', 'n7'], 'WHERE ? LIMIT ? OFFSET ?');

# Placeholders elsewhere.
is_deeply([$dbh->selectrow_array('SELECT ? + 1, ?, CONCAT(?, name) FROM t WHERE id = ?', undef, 41, 'x', 'pre-', 2)],
    [42, 'x', 'pre-n2'], 'placeholders in the select list');
is_deeply($dbh->selectcol_arrayref('SELECT id FROM t WHERE id IN (?, ?, ?) ORDER BY id', undef, 5, 1, 99),
    [1, 5], 'IN (?, ?, ?)');
is_deeply($dbh->selectcol_arrayref('SELECT d.id FROM (SELECT id FROM t ORDER BY id DESC LIMIT ?) AS d ORDER BY d.id', undef, 2),
    [7, 8], 'LIMIT ? in a derived table');
is_deeply($dbh->selectall_arrayref('SELECT grp, COUNT(*) FROM t GROUP BY grp HAVING COUNT(*) > ? ORDER BY grp', undef, 2),
    [[1, 3], [2, 3]], 'HAVING ... > ?');
is_deeply($dbh->selectcol_arrayref('(SELECT id FROM t WHERE id < ?) UNION (SELECT id FROM t WHERE id > ?) ORDER BY id LIMIT ?',
    undef, 3, 6, 3), [1, 2, 7], 'UNION ... LIMIT ?');
is_deeply([$dbh->selectrow_array('SELECT price, born, data FROM t WHERE name = ?', undef, 'n3')],
    ['3.25', '2001-01-03', "b\0" . "3\xff"], 'DECIMAL, DATE and BLOB come back');
is($dbh->selectrow_array('SELECT COUNT(*) FROM t WHERE price BETWEEN ? AND ?', undef, '2.00', 4.5), 3, 'BETWEEN ? AND ?');

# Prepared UPDATE / DELETE: affected rows.
my $upd = $dbh->prepare('UPDATE t SET price = price + ?, name = CONCAT(name, ?) WHERE grp = ? ORDER BY id LIMIT ?');
is($upd->execute(10, '!', 0, 1), 1, 'UPDATE ... LIMIT ? affected 1 row');
is($dbh->selectrow_array('SELECT name FROM t WHERE price > 10'), 'n3!', 'the UPDATE changed the first row of the group');
is($dbh->do('UPDATE t SET born = ? WHERE id >= ?', undef, undef, 7), 2, 'UPDATE with a NULL parameter');
is($dbh->selectrow_array('SELECT COUNT(*) FROM t WHERE born IS NULL'), 2, 'the NULLs were stored');
my $del = $dbh->prepare('DELETE FROM t WHERE id = ?');
is($del->execute(8), 1, 'DELETE one row');
is($del->execute(8), '0E0', 'DELETE of a missing row: zero rows');

# Errors and transactions.
ok(!eval { $ins->execute('n1', 1, undef, undef, 0); 1 }, 'a duplicate key is refused');
is($dbh->err, 1062, 'with 1062');
$dbh->begin_work;
$dbh->do('DELETE FROM t WHERE id < ?', undef, 4);
is($dbh->selectrow_array('SELECT COUNT(*) FROM t'), 4, 'deleted inside the transaction');
$dbh->rollback;
is($dbh->selectrow_array('SELECT COUNT(*) FROM t'), 7, 'rolled back');

cmp_ok(status('Com_stmt_prepare') - $prepared_before, '>=', 15, 'statements were prepared on the server');

$dbh->disconnect;
$root->do("DROP DATABASE $db");
$root->disconnect;
done_testing();
