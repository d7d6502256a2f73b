//! Manual testing: `cargo run -p quire-server --example serve -- <port> <datadir>`
//! starts the server on 127.0.0.1:<port> until Ctrl-C / kill.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use quire_config::Config;
use quire_engine::Engine;
use quire_io::{OsFs, Vfs};
use quire_server::{serve, ServerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().as_deref().unwrap_or("3307").parse()?;
    let datadir = args.next().unwrap_or_else(|| "./quire-data".to_string());
    let cfg = Config {
        datadir: datadir.into(),
        ..Config::default()
    };
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new(cfg.innodb_flush_method, cfg.innodb_use_fdatasync));
    let (engine, _) = Engine::open(vfs, &cfg)?;
    if let Some(user) = args.next() {
        let password = args.next().unwrap_or_default();
        quire_server::accounts().create_user(&user, "%", &password)?;
        quire_server::accounts().grant_all(&user, "%")?;
    }
    eprintln!("listening on 127.0.0.1:{port}");
    serve(
        engine.clone(),
        ServerConfig {
            port,
            ..ServerConfig::default()
        },
        Arc::new(AtomicBool::new(false)),
    )?;
    engine.close(true)?;
    Ok(())
}
