//! Column prefix indexes (`KEY (c(n))`) against a full scan: for random
//! strings (shorter than, as long as and longer than the prefix; multi-byte
//! characters; trailing spaces; case and accent variants) in several
//! collations, every predicate read through the prefix index returns
//! exactly the rows the same predicate returns from an unindexed copy of
//! the table. A UNIQUE prefix index refuses exactly the rows whose first N
//! characters collate equal to a stored row's. Then the indexes survive a
//! restart without a clean close (redo recovery) and CHECK TABLE finds
//! their entries consistent with the rows.

use quire_engine::Value;
use quire_io::Rng;
use quire_sql::{Output, Session};

mod common;

fn ok(s: &mut Session, q: &str) {
    s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
}

fn ids(s: &mut Session, q: &str) -> Vec<i64> {
    match s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}")) {
        Output::Rows { rows, .. } => rows
            .iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                ref v => panic!("{q}: {v:?}"),
            })
            .collect(),
        other => panic!("{q}: {other:?}"),
    }
}

fn count(s: &mut Session, q: &str) -> i64 {
    match s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}")) {
        Output::Rows { rows, .. } => match rows.first().and_then(|r| r.first()) {
            Some(Value::Int(i)) => *i,
            other => panic!("{q}: {other:?}"),
        },
        other => panic!("{q}: {other:?}"),
    }
}

/// A random string of 0..=9 pieces of `alphabet`, at most 12 characters.
fn word(rng: &mut Rng, alphabet: &[&str]) -> String {
    let n = rng.below(10) as usize;
    (0..n)
        .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
        .collect::<String>()
        .chars()
        .take(12)
        .collect()
}

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

const UNICODE: &[&str] = &[
    "a", "b", "A", "B", "é", "É", "e", " ", "😀", "中", "z", "ab",
];
const LATIN: &[&str] = &["a", "b", "A", "B", "é", "É", "e", " ", "z"];

/// (column type, alphabet) of each case.
fn cases() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("VARCHAR(12) COLLATE utf8mb4_0900_ai_ci", UNICODE),
        ("VARCHAR(12) COLLATE utf8mb4_general_ci", UNICODE),
        ("VARCHAR(12) COLLATE utf8mb4_bin", UNICODE),
        ("VARCHAR(12) COLLATE utf8mb4_0900_bin", UNICODE),
        ("VARCHAR(12) CHARACTER SET latin1", LATIN),
        ("CHAR(12) COLLATE utf8mb4_0900_as_cs", UNICODE),
        ("TEXT COLLATE utf8mb4_0900_ai_ci", UNICODE),
        ("VARBINARY(60)", UNICODE),
        ("BLOB", UNICODE),
    ]
}

#[test]
fn prefix_index_reads_equal_full_scans() {
    let (engine, dir) = common::open_engine("prefix-eq");
    let mut s = Session::new(engine.clone(), "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    let mut rng = Rng::new(0x5eed_c0de);
    let mut checked = 0usize;
    for (n, (ty, alphabet)) in cases().into_iter().enumerate() {
        for prefix in [1u32, 3, 5] {
            let (t, f) = (format!("t{n}_{prefix}"), format!("f{n}_{prefix}"));
            ok(
                &mut s,
                &format!(
                    "CREATE TABLE {t} (id INT PRIMARY KEY, c {ty}, KEY k (c({prefix})), KEY k2 (id, c({prefix})))"
                ),
            );
            ok(
                &mut s,
                &format!("CREATE TABLE {f} (id INT PRIMARY KEY, c {ty})"),
            );
            let mut values = Vec::new();
            for id in 0..120 {
                let v = if id % 17 == 0 {
                    "NULL".to_string()
                } else {
                    lit(&word(&mut rng, alphabet))
                };
                values.push(format!("({id}, {v})"));
            }
            let rows = values.join(", ");
            ok(&mut s, &format!("INSERT INTO {t} VALUES {rows}"));
            ok(&mut s, &format!("INSERT INTO {f} VALUES {rows}"));
            for _ in 0..40 {
                let (x, y) = (
                    lit(&word(&mut rng, alphabet)),
                    lit(&word(&mut rng, alphabet)),
                );
                let like = lit(&format!("{}%", word(&mut rng, alphabet).replace('%', "")));
                for pred in [
                    format!("c = {x}"),
                    format!("c <=> {x}"),
                    format!("c > {x}"),
                    format!("c >= {x}"),
                    format!("c < {x}"),
                    format!("c <= {x}"),
                    format!("c BETWEEN {x} AND {y}"),
                    format!("c IN ({x}, {y})"),
                    format!("c LIKE {like}"),
                    format!("c > {x} AND c < {y}"),
                    format!("id = 7 AND c >= {x}"),
                ] {
                    let via = ids(
                        &mut s,
                        &format!("SELECT id FROM {t} FORCE INDEX (k) WHERE {pred} ORDER BY id"),
                    );
                    let full = ids(
                        &mut s,
                        &format!("SELECT id FROM {f} WHERE {pred} ORDER BY id"),
                    );
                    assert_eq!(via, full, "{ty} prefix {prefix}: {pred}");
                    // The optimizer's own choice, and ORDER BY the column
                    // (a sort: the index gives no order).
                    let chosen = ids(
                        &mut s,
                        &format!("SELECT id FROM {t} WHERE {pred} ORDER BY id"),
                    );
                    assert_eq!(chosen, full, "{ty} prefix {prefix} (chosen): {pred}");
                    let by_c = ids(
                        &mut s,
                        &format!("SELECT id FROM {t} FORCE INDEX (k) WHERE {pred} ORDER BY c, id"),
                    );
                    let by_c_full = ids(
                        &mut s,
                        &format!("SELECT id FROM {f} WHERE {pred} ORDER BY c, id"),
                    );
                    assert_eq!(by_c, by_c_full, "{ty} prefix {prefix} ORDER BY c: {pred}");
                    checked += 1;
                }
            }
            // Updates and deletes through the index keep it consistent.
            for _ in 0..10 {
                let (x, y) = (
                    lit(&word(&mut rng, alphabet)),
                    lit(&word(&mut rng, alphabet)),
                );
                for tb in [&t, &f] {
                    ok(
                        &mut s,
                        &format!("UPDATE {tb} SET c = {y} WHERE c >= {x} AND id % 3 = 0"),
                    );
                    ok(
                        &mut s,
                        &format!("DELETE FROM {tb} WHERE c = {y} AND id % 5 = 0"),
                    );
                }
            }
            assert_eq!(
                ids(&mut s, &format!("SELECT id FROM {t} ORDER BY id")),
                ids(&mut s, &format!("SELECT id FROM {f} ORDER BY id")),
                "{ty} prefix {prefix} after writes"
            );
            assert_eq!(
                ids(
                    &mut s,
                    &format!("SELECT COUNT(*) FROM {t} FORCE INDEX (k) WHERE c >= '' OR c IS NULL")
                ),
                ids(&mut s, &format!("SELECT COUNT(*) FROM {f}")),
            );
        }
    }
    assert!(checked > 1000, "{checked}");
    // No clean close: the indexes come back from the redo log, and CHECK
    // TABLE compares every entry with its row.
    s.close();
    drop(s);
    drop(engine);
    let engine = common::open_engine_at(&dir);
    let mut s = Session::new(engine.clone(), "root");
    ok(&mut s, "USE d");
    let names: Vec<String> = match s.execute("SHOW TABLES").expect("tables") {
        Output::Rows { rows, .. } => rows.iter().map(|r| r[0].to_string()).collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(names.len(), cases().len() * 3 * 2);
    for t in names.iter().filter(|n| n.starts_with('t')) {
        match s.execute(&format!("CHECK TABLE {t}")).expect("check") {
            Output::Rows { rows, .. } => {
                assert_eq!(
                    rows.last().map(|r| r[3].to_string()),
                    Some("OK".into()),
                    "{t}: {rows:?}"
                )
            }
            other => panic!("{other:?}"),
        }
        let f = t.replacen('t', "f", 1);
        assert_eq!(
            ids(
                &mut s,
                &format!("SELECT id FROM {t} FORCE INDEX (k) WHERE c > 'a' ORDER BY id")
            ),
            ids(
                &mut s,
                &format!("SELECT id FROM {f} WHERE c > 'a' ORDER BY id")
            ),
            "{t} after recovery"
        );
    }
    engine.close(true).expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unique_prefix_refuses_exactly_shared_prefixes() {
    let (engine, dir) = common::open_engine("prefix-uniq");
    let mut s = Session::new(engine.clone(), "root");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    let mut rng = Rng::new(77);
    for (n, (ty, alphabet)) in cases().into_iter().enumerate() {
        let prefix = 2 + n as u32 % 3;
        let t = format!("u{n}");
        ok(
            &mut s,
            &format!("CREATE TABLE {t} (id INT PRIMARY KEY, c {ty}, UNIQUE KEY uk (c({prefix})))"),
        );
        // One row of the same type: the value as the column stores it
        // (a CHAR loses its trailing spaces).
        let one = format!("s{n}");
        let binary = ty.contains("BINARY") || ty.contains("BLOB");
        ok(&mut s, &format!("CREATE TABLE {one} (c {ty})"));
        let (mut taken, mut refused) = (0, 0);
        for id in 0..150 {
            let v = word(&mut rng, alphabet);
            ok(&mut s, &format!("DELETE FROM {one}"));
            ok(&mut s, &format!("INSERT INTO {one} VALUES ({})", lit(&v)));
            // Whether a stored row shares the first N characters, asked
            // of a full scan under the column's collation.
            let shared = count(
                &mut s,
                &format!(
                    "SELECT COUNT(*) FROM {t} IGNORE INDEX (uk), {one} WHERE {}",
                    if binary {
                        // Bytes: compare the hex of the first N bytes.
                        format!(
                            "LEFT(HEX({t}.c), {0}) = LEFT(HEX({one}.c), {0})",
                            2 * prefix
                        )
                    } else {
                        format!("LEFT({t}.c, {prefix}) = LEFT({one}.c, {prefix})")
                    }
                ),
            );
            match s.execute(&format!("INSERT INTO {t} VALUES ({id}, {})", lit(&v))) {
                Ok(_) => {
                    assert_eq!(
                        shared, 0,
                        "{ty}: {v:?} taken though a row shares its prefix"
                    );
                    taken += 1;
                }
                Err(e) => {
                    assert_eq!(e.code, 1062, "{ty}: {v:?}: {e:?}");
                    assert!(
                        shared > 0,
                        "{ty}: {v:?} refused though no row shares it: {e:?}"
                    );
                    refused += 1;
                }
            }
        }
        assert!(
            taken > 3 && refused > 3,
            "{ty}: {taken} taken, {refused} refused"
        );
        // The online build of the same UNIQUE prefix finds no duplicate
        // either; a copying ALTER keeps it.
        ok(
            &mut s,
            &format!("ALTER TABLE {t} ADD UNIQUE INDEX uk2 (c({prefix}))"),
        );
        ok(&mut s, &format!("ALTER TABLE {t} ADD COLUMN z INT FIRST"));
        let e = s
            .execute(&format!("INSERT INTO {t} (id, c) SELECT 1000, c FROM {t} WHERE id = (SELECT MIN(id) FROM {t})"))
            .expect_err("a copy of a stored value");
        assert_eq!(e.code, 1062, "{ty}: {e:?}");
    }
    engine.close(true).expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}
