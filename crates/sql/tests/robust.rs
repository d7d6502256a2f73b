//! The front end must never panic: random and garbled statements produce
//! errors (or results), nothing else. Also checks the SHOW statements whose
//! numbers change from run to run.

use quire_engine::Value;
use quire_sql::{Output, Session};

mod common;
use common as scripts;

const SEEDS: &[&str] = &[
    "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 10 ORDER BY c",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 5, 'x', 'y')",
    "UPDATE sbtest1 SET k=k+1 WHERE id=3",
    "DELETE FROM sbtest1 WHERE id=7",
    "SELECT SUM(k), COUNT(*), AVG(id) FROM sbtest1 GROUP BY k HAVING COUNT(*) > 0",
    "SELECT a.id FROM sbtest1 a JOIN sbtest1 b ON a.id = b.k LEFT JOIN sbtest1 c ON c.id = a.k",
    "SET GLOBAL sync_binlog = 1",
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit')",
    "CREATE TABLE z (a INT PRIMARY KEY, b VARCHAR(10) DEFAULT 'q', KEY (b))",
    "SELECT CONCAT(c, 'x'), LENGTH(pad), COALESCE(NULL, k) FROM sbtest1 WHERE c LIKE '%a%'",
    "CREATE USER IF NOT EXISTS 'a'@'%' IDENTIFIED WITH mysql_native_password BY 'pw', b@localhost",
    "GRANT ALL PRIVILEGES ON db.* TO u@'%', 'v' WITH GRANT OPTION",
    "SET PASSWORD FOR CURRENT_USER() = PASSWORD('x')",
];

const PIECES: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "(",
    ")",
    ",",
    "'",
    "\"",
    "`",
    "?",
    "*",
    "id",
    "sbtest1",
    "=",
    "<",
    ">=",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "1",
    "-9223372036854775808",
    "18446744073709551616",
    "1e400",
    "0.5",
    "LIMIT",
    "ORDER BY",
    "GROUP BY",
    "INSERT",
    "INTO",
    "VALUES",
    "SET",
    "@@",
    "@",
    "SHOW",
    "DROP",
    "TABLE",
    "/*",
    "*/",
    "--",
    ";",
    "BETWEEN",
    "IN",
    "LIKE",
    "%",
    "\\",
    "DIV",
    "/",
    "SUM(",
    "COUNT(",
    "CASE",
    "WHEN",
    "END",
    "é",
    "\u{0}",
    "FOR UPDATE",
    "LOCK IN SHARE MODE",
    "UNION",
    "JOIN",
    "ON",
    "REPEAT('a', 100000000)",
    "LPAD('', -1, 'x')",
];

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

#[test]
fn garbage_never_panics() {
    let (engine, dir) = scripts::open_engine("fuzz");
    let mut s = Session::new(engine.clone(), "root");
    for q in [
        "CREATE DATABASE f",
        "USE f",
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))",
        "INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'a', 'b'), (3, 'c', 'd'), (3, 'e', 'f')",
    ] {
        s.execute(q).expect(q);
    }
    let mut rng = Lcg(42);
    let mut errors = 0;
    let mut n = 0;
    for _ in 0..400 {
        let q = match rng.next() % 3 {
            0 => {
                // a seed statement with bytes cut, swapped or duplicated
                let seed = SEEDS[rng.next() % SEEDS.len()];
                let mut b: Vec<char> = seed.chars().collect();
                for _ in 0..(1 + rng.next() % 4) {
                    if b.is_empty() {
                        break;
                    }
                    let i = rng.next() % b.len();
                    match rng.next() % 3 {
                        0 => {
                            b.remove(i);
                        }
                        1 => {
                            let j = rng.next() % b.len();
                            b.swap(i, j);
                        }
                        _ => b.insert(i, b[i]),
                    }
                }
                b.into_iter().collect::<String>()
            }
            1 => (0..(1 + rng.next() % 12))
                .map(|_| PIECES[rng.next() % PIECES.len()])
                .collect::<Vec<_>>()
                .join(" "),
            _ => {
                let seed = SEEDS[rng.next() % SEEDS.len()];
                let cut = rng.next() % (seed.len() + 1);
                seed.get(..cut).unwrap_or(seed).to_string()
            }
        };
        n += 1;
        if s.execute(&q).is_err() {
            errors += 1;
        }
        if let Ok(info) = s.prepare(&q) {
            let params = vec![Value::Int(rng.next() as i64 % 10); info.params];
            let _ = s.execute_prepared(info.id, params);
            s.close_prepared(info.id);
        }
    }
    assert!(errors > n / 4, "most garbage should fail: {errors}/{n}");
    // Deep nesting is refused, not a stack overflow.
    let deep = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(s.execute(&deep).is_err());
    s.close();
    drop(s);
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}

fn rows(o: Output) -> Vec<Vec<Value>> {
    match o {
        Output::Rows { rows, .. } => rows,
        Output::Done { .. } | Output::Streamed { .. } => panic!("expected rows"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        o => o.to_string(),
    }
}

#[test]
fn status_and_binlog_statements() {
    let (engine, dir) = scripts::open_engine("status");
    let mut s = Session::new(engine.clone(), "root");
    s.execute("CREATE DATABASE st").unwrap();
    s.execute("USE st").unwrap();
    s.execute("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    s.execute("BEGIN").unwrap();
    s.execute("INSERT INTO t VALUES (1)").unwrap();
    s.execute("COMMIT").unwrap();
    let r = rows(s.execute("SHOW ENGINE INNODB STATUS").unwrap());
    let status = text(&r[0][2]);
    for line in [
        "Log sequence number",
        "Last checkpoint at",
        "Pending writes",
    ] {
        assert!(status.contains(line), "{line} missing in {status}");
    }
    let r = rows(
        s.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_fsyncs','Innodb_log_waits','Innodb_dblwr_writes','Innodb_dblwr_pages_written','Com_commit','Com_rollback')")
            .unwrap(),
    );
    let names: Vec<String> = r.iter().map(|x| text(&x[0])).collect();
    assert!(names.contains(&"Com_commit".to_string()), "{names:?}");
    assert!(names.contains(&"Com_rollback".to_string()), "{names:?}");
    let r = rows(
        s.execute("SELECT * FROM performance_schema.global_status WHERE VARIABLE_NAME IN ('Com_commit','Com_begin','Com_insert')")
            .unwrap(),
    );
    assert_eq!(r.len(), 3);
    for x in &r {
        assert!(text(&x[1]).parse::<u64>().unwrap() >= 1, "{x:?}");
    }
    let r = rows(s.execute("SHOW MASTER STATUS").unwrap());
    assert!(text(&r[0][0]).starts_with("binlog."));
    let r = rows(s.execute("SHOW BINARY LOGS").unwrap());
    assert!(!r.is_empty());
    s.execute("SET GLOBAL binlog_group_commit_sync_delay = 10")
        .unwrap();
    assert_eq!(
        engine
            .config()
            .get("binlog_group_commit_sync_delay")
            .unwrap(),
        "10"
    );
    s.execute("SET GLOBAL binlog_group_commit_sync_delay = 0")
        .unwrap();
    drop(s);
    let _ = engine.close(true);
    let _ = std::fs::remove_dir_all(dir);
}
