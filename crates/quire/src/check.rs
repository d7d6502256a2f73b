//! `quire check --datadir D`: offline verification of a data directory.

use std::process::ExitCode;
use std::sync::Arc;

use quire_config::Config;
use quire_engine::offpage::check_datadir;
use quire_io::{OsFs, Vfs};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print every problem (default: the first 50).
    #[arg(long)]
    all: bool,
}

pub fn run(a: Args, cfg: Config) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(quire_io::FlushMethod::Fsync, false));
    let r = check_datadir(&vfs, &cfg.datadir)?;
    let shown = if a.all {
        r.errors.len()
    } else {
        r.errors.len().min(50)
    };
    for e in &r.errors[..shown] {
        println!("ERROR {e}");
    }
    if shown < r.errors.len() {
        println!("... {} more (use --all)", r.errors.len() - shown);
    }
    println!(
        "file={} page_size={} pages={} hwm={} free_pages={} trees={} entries={} lob_chains={} lob_orphans={} errors={}",
        r.file.display(),
        r.page_size,
        r.pages,
        r.hwm,
        r.free_pages,
        r.trees,
        r.entries,
        r.lob_chains,
        r.lob_orphans,
        r.errors.len()
    );
    Ok(if r.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
