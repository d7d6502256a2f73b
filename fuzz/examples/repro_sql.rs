//! Runs SQL statements (arguments, or lines of stdin) through a session on
//! the fuzz engine and prints each outcome: `cargo run --release --example
//! repro_sql -- "SELECT 1 DIV"`.
use std::io::BufRead;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stmts: Vec<String> = if args.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .collect()
    } else {
        args
    };
    let engine = quire_fuzz::sql::engine_for_repro();
    let mut s = quire_sql::Session::new(engine, "root");
    s.use_db("fz").expect("use fz");
    for sql in stmts {
        println!("> {sql}");
        match s.execute(&sql) {
            Ok(out) => println!("{out:?}"),
            Err(e) => println!("ERROR {e:?}"),
        }
    }
    s.close();
}
