//! # server_uuid: the data directory's identity (`auto.cnf`)
//!
//! MySQL names every server by a UUID kept in `DATADIR/auto.cnf`, made on
//! the first start and read on every later one; replicas and GTIDs tell
//! servers apart by it (`@@server_uuid`, SHOW REPLICAS). quire keeps the
//! same file, in the same format:
//!
//! ```text
//!  [auto]
//!  server-uuid=8a94f357-aab4-11df-86ab-c80aa9429562
//! ```
//!
//! A new file is written to a temporary name, synced and renamed, so a
//! crash leaves either no file (a new UUID next start, as on a fresh data
//! directory) or the whole one. A file that exists but holds no valid
//! UUID stops the start with an error naming it, as MySQL's does: making
//! up a new identity would make replicas see a different server.

use std::path::Path;
use std::sync::Arc;

use quire_io::{FileKind, OpenOptions, Vfs};

use crate::error::{EngineError, Result};

const FILE: &str = "auto.cnf";

fn err(what: impl std::fmt::Display) -> EngineError {
    EngineError::internal(format!("{FILE}: {what}"))
}

/// The UUID in the text of an `auto.cnf`, if it has a valid one.
fn parse(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("server-uuid"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(|v| v.trim().to_ascii_lowercase())
        .find(|v| uuid::Uuid::try_parse(v).is_ok() && v.len() == 36)
}

/// Reads the data directory's server_uuid, making it on the first start.
pub(crate) fn load_or_create(vfs: &Arc<dyn Vfs>, datadir: &Path) -> Result<String> {
    let path = datadir.join(FILE);
    if vfs.exists(&path).map_err(err)? {
        let f = vfs
            .open(&path, OpenOptions::existing(FileKind::Other))
            .map_err(err)?;
        let len = f.len().map_err(err)?;
        if len > 64 << 10 {
            return Err(err(format!("{len} bytes is not a server UUID file")));
        }
        let mut buf = vec![0u8; len as usize];
        f.read_at(&mut buf, 0).map_err(err)?;
        return parse(&String::from_utf8_lossy(&buf)).ok_or_else(|| {
            err(format!(
                "'{}' holds no valid server-uuid; restore it or remove it to make a new one",
                path.display()
            ))
        });
    }
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    let tmp = datadir.join(format!("{FILE}.tmp"));
    let f = vfs
        .open(&tmp, OpenOptions::create(FileKind::Other))
        .map_err(err)?;
    f.set_len(0).map_err(err)?;
    f.write_at(format!("[auto]\nserver-uuid={id}\n").as_bytes(), 0)
        .map_err(err)?;
    f.sync().map_err(err)?;
    drop(f);
    vfs.rename(&tmp, &path).map_err(err)?;
    vfs.sync_dir(datadir).map_err(err)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_io::{CrashMode, FlushMethod, SimFs};

    #[test]
    fn the_uuid_is_made_once_and_survives_a_crash() {
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let dir = Path::new("/u/data");
        vfs.create_dir_all(dir).expect("dir");
        let a = load_or_create(&vfs, dir).expect("create");
        assert_eq!(a.len(), 36);
        sim.crash(CrashMode::Power { sector: 512 }, 5);
        assert_eq!(load_or_create(&vfs, dir).expect("read"), a);
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_new_identity() {
        assert_eq!(
            parse("[auto]\nserver-uuid = 8A94F357-AAB4-11DF-86AB-C80AA9429562\n").as_deref(),
            Some("8a94f357-aab4-11df-86ab-c80aa9429562")
        );
        assert_eq!(parse("[auto]\nserver-uuid=not-a-uuid\n"), None);
        let sim = SimFs::new(FlushMethod::Fsync);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let dir = Path::new("/u/data");
        vfs.create_dir_all(dir).expect("dir");
        let f = vfs
            .open(&dir.join(FILE), OpenOptions::create(FileKind::Other))
            .expect("open");
        f.write_at(b"[auto]\nserver-uuid=oops\n", 0).expect("write");
        let e = load_or_create(&vfs, dir).expect_err("refused");
        assert!(e.message.contains("no valid server-uuid"), "{}", e.message);
    }
}
