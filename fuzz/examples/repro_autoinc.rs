//! AUTO_INCREMENT after an explicit huge id.
use quire_engine::Value;
fn main() {
    let engine = quire_fuzz::sql::engine_for_repro();
    let mut s = quire_sql::Session::new(engine, "root");
    s.use_db("fz").unwrap();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let v = match args.first().map(String::as_str) {
        Some("imax") => Value::Int(i64::MAX),
        Some("umax") => Value::UInt(u64::MAX),
        Some("m1") => Value::Int(-1),
        _ => Value::text("18446744073709551615"),
    };
    let p = s.prepare("INSERT INTO t1 (id, k) VALUES (?, 1)").unwrap();
    println!(
        "prepared insert with {v:?}: {:?}",
        s.execute_prepared(p.id, vec![v.clone()])
    );
    println!(
        "{:?}",
        s.execute("SELECT id FROM t1 ORDER BY id DESC LIMIT 2")
    );
    println!("next: {:?}", s.execute("INSERT INTO t1 (k) VALUES (2)"));
}
