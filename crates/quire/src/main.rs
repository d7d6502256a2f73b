//! # quire: one binary for the server and the lab
//!
//! ```text
//!   quire bench btree      load and measure a B+tree on a real data directory
//!   quire bench query      a 10M-row ORDER BY within sort_buffer_size, LIMIT latency
//!   quire crashtest        torture runs on the simulated file system
//!   quire check            verify a data directory offline (like innochecksum)
//!   quire serve            the MySQL-protocol server
//! ```
//!
//! Every command takes MySQL server variables (`--innodb-buffer-pool-size=256M`,
//! `--innodb_flush_method=O_DIRECT`, `--defaults-file=my.cnf` with a
//! `[mysqld]` section). They are taken out of the argument list first by
//! `quire_config::parse_args`; what remains is parsed by clap.

mod bench;
mod bench_commit;
mod bench_lob;
mod bench_query;
mod bench_sql;
mod check;
mod crashtest;
mod crashtest_engine;
mod hist;
mod serve;

use std::process::ExitCode;

/// The process allocator. The query path allocates and frees many small,
/// short-lived buffers per statement (rows, values, plan nodes) from one
/// thread per connection; glibc's malloc spent about a quarter of the
/// server's CPU on them under sysbench oltp_read_write (`_int_malloc`,
/// `malloc_consolidate`, `_int_free` in perf). mimalloc keeps per-thread
/// free lists and does not consolidate.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "quire",
    version,
    about = "quire: a MySQL-compatible transactional database"
)]
#[command(
    after_help = "Server variables use MySQL names: --innodb-buffer-pool-size=256M, \
--innodb_flush_method=O_DIRECT, --datadir=DIR, --defaults-file=my.cnf ([mysqld] section)."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Benchmarks that print throughput, latency percentiles and I/O counters.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCmd,
    },
    /// Crash torture: random workload, simulated crashes, recovery, verification.
    Crashtest(crashtest::Args),
    /// Verify every page checksum and B+tree invariant of a data directory (--datadir).
    Check(check::Args),
    /// Serve the MySQL protocol (--port, --bind-address, --socket, --datadir, any variable).
    Serve(serve::Args),
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let (cfg, rest) = match quire_config::parse_args(argv.iter().skip(1).cloned()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("quire: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(std::iter::once(argv[0].clone()).chain(rest));
    let res = match cli.cmd {
        Cmd::Bench { what } => bench::run(what, cfg),
        Cmd::Crashtest(a) => crashtest::run(a, cfg),
        Cmd::Check(a) => check::run(a, cfg),
        Cmd::Serve(a) => serve::run(a, cfg),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("quire: {e}");
            ExitCode::FAILURE
        }
    }
}
