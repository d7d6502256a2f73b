//! Measures how fast `KILL QUERY` stops a 10-million-row scan.
//!
//! ```text
//! cargo run -p quire-server --example kill_latency [-- ROWS_PER_SIDE RUNS]
//! ```
//!
//! A table of n rows (default 216) is joined with itself three times:
//! n³ = 10,077,696 row combinations, each one produced by the nested-loop
//! join and tested against `x.v + y.v + z.v < 0` (never true, so nothing
//! is materialized). The scan is first run to its end once (its duration
//! shows the work is real), then started RUNS times and killed from a
//! second connection after 100..600 ms; the figure is the time from
//! sending `KILL QUERY` to the victim receiving ERR 1317. A figure, not a
//! test: it never fails a build.

#[path = "../tests/wire/mod.rs"]
mod wire;

use std::time::{Duration, Instant};

use wire::{start, Client};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(216);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let srv = start("kill-latency", |_| {});
    let mut a = Client::root(srv.port);
    let mut b = Client::root(srv.port);
    a.ok("CREATE DATABASE kl");
    a.ok("CREATE TABLE kl.t (id INT PRIMARY KEY, v INT)");
    let vals: Vec<String> = (0..n).map(|i| format!("({i},{i})")).collect();
    a.ok(&format!("INSERT INTO kl.t VALUES {}", vals.join(",")));
    let q = "SELECT COUNT(*) FROM kl.t x, kl.t y, kl.t z WHERE x.v + y.v + z.v < 0";
    let rows = n * n * n;
    let t0 = Instant::now();
    let full = a.value(q);
    let full_t = t0.elapsed();
    println!(
        "full scan: {rows} rows in {:.3} s ({:.1} M rows/s), COUNT = {full:?}",
        full_t.as_secs_f64(),
        rows as f64 / full_t.as_secs_f64() / 1e6
    );
    let mut lat = Vec::new();
    let mut victim = a;
    for i in 0..runs {
        let id = victim.id;
        let h = std::thread::spawn(move || {
            let r = victim.query(q);
            (victim, r, Instant::now())
        });
        let wait = Duration::from_millis(100 + (i as u64 * 53) % 500);
        std::thread::sleep(wait.min(full_t / 2));
        let sent = Instant::now();
        b.ok(&format!("KILL QUERY {id}"));
        let (v, r, done) = h.join().expect("victim thread");
        victim = v;
        match r {
            Err((1317, _)) => lat.push(done.duration_since(sent)),
            other => println!("run {i}: not interrupted ({other:?}); scan too short?"),
        }
    }
    lat.sort();
    if lat.is_empty() {
        println!("no interrupted runs");
        return;
    }
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    println!(
        "KILL QUERY -> ERR 1317 over {} runs: min {:.2} ms, median {:.2} ms, max {:.2} ms",
        lat.len(),
        ms(&lat[0]),
        ms(&lat[lat.len() / 2]),
        ms(&lat[lat.len() - 1])
    );
}
