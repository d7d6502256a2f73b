//! Bulk load (bulk.rs): the tree it builds is a normal tree, a crash at
//! any I/O leaves the whole tree or none (and no leaked page), and an
//! abandoned load gives its pages back.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use quire_io::{CrashMode, FlushMethod, SimFs};

use super::reclaim_reservations;
use crate::btree::tests::{open, test_config};
use crate::check::check_datadir;
use crate::space;
use crate::store::Store;

fn key(i: u32) -> Vec<u8> {
    format!("k{:08}", i * 7).into_bytes()
}
fn val(i: u32) -> Vec<u8> {
    format!("v{i}-{}", "x".repeat((i % 97) as usize)).into_bytes()
}

fn load(store: &Store, name: &str, n: u32) -> crate::Result<()> {
    let mut b = store.bulk_load(name)?;
    for i in 0..n {
        b.push(&key(i), &val(i))?;
    }
    b.finish()?;
    Ok(())
}

fn contents(store: &Store, name: &str) -> Option<BTreeMap<Vec<u8>, Vec<u8>>> {
    let t = store.index(name).expect("directory")?;
    Some(t.scan_all().expect("scan").into_iter().collect())
}

fn model(n: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    (0..n).map(|i| (key(i), val(i))).collect()
}

fn assert_checks(store: &Store) {
    store.checkpoint().expect("checkpoint");
    let vfs = store.shared().vfs.clone();
    let r = check_datadir(&vfs, store.datadir()).expect("check");
    assert!(r.is_ok(), "{:?}", r.errors);
}

fn free_count(store: &Store) -> u32 {
    let g = store
        .shared()
        .pool
        .read(crate::page::PageId::new(0, 0))
        .expect("header");
    space::read_header(g.bytes()).expect("header").free_count
}

#[test]
fn a_bulk_loaded_tree_is_a_normal_tree() {
    for n in [0u32, 1, 40, 5000] {
        let sim = SimFs::new(FlushMethod::Fsync);
        let cfg = test_config(4096);
        let store = open(&sim, &cfg);
        load(&store, "b", n).expect("load");
        let mut want = model(n);
        assert_eq!(contents(&store, "b").as_ref(), Some(&want), "n={n}");
        assert_checks(&store);
        // Logged writes into it afterwards: splits, deletes, reads.
        let t = store.index("b").expect("dir").expect("tree");
        for i in 0..600u32 {
            let k = format!("k{:08}", i * 7 + 3).into_bytes();
            t.put(&k, b"later").expect("put");
            want.insert(k, b"later".to_vec());
            if i % 3 == 0 && i < n {
                t.delete(&key(i)).expect("delete");
                want.remove(&key(i));
            }
        }
        assert_eq!(contents(&store, "b").as_ref(), Some(&want), "n={n}");
        assert_checks(&store);
        // The pages are on disk before the directory names them: a crash
        // once the registration is durable keeps the tree.
        store.sync_log().expect("sync");
        store.close(false).expect("close");
        sim.crash(CrashMode::Power { sector: 512 }, u64::from(n));
        let store = open(&sim, &cfg);
        assert_eq!(reclaim_reservations(&store).expect("reclaim"), 0);
        assert_eq!(contents(&store, "b").as_ref(), Some(&want), "n={n}");
        assert_checks(&store);
    }
}

#[test]
fn keys_out_of_order_and_oversized_entries_are_errors() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(4096));
    let mut b = store.bulk_load("o").expect("start");
    b.push(b"b", b"1").expect("push");
    assert!(b.push(b"b", b"2").is_err());
    assert!(b.push(b"a", b"2").is_err());
    assert!(b.push(b"c", &vec![0u8; 5000]).is_err());
    drop(b);
    assert!(store.index("o").expect("dir").is_none());
    assert!(store.bulk_load("missing").is_ok());
    store.create_index("there").expect("create");
    assert!(store.bulk_load("there").is_err());
}

#[test]
fn an_abandoned_load_gives_its_pages_back() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(4096));
    store.create_index("other").expect("create");
    let before = free_count(&store);
    {
        let mut b = store.bulk_load("gone").expect("start");
        for i in 0..8000 {
            b.push(&key(i), &val(i)).expect("push");
        }
        assert!(b.pages_written() > 64);
    }
    assert!(store.index("gone").expect("dir").is_none());
    assert!(free_count(&store) > before + 64, "pages were given back");
    assert_checks(&store);
    // The freed pages are used again.
    load(&store, "again", 3000).expect("load");
    assert_eq!(contents(&store, "again"), Some(model(3000)));
    assert_checks(&store);
}

/// A power loss at every I/O of a bulk load (and then at every I/O of the
/// recovery and reclaim that follow one of them): the tree is there whole
/// or not at all, its reservation is given back, nothing leaks.
#[test]
fn a_crash_at_any_io_of_a_bulk_load_leaves_the_whole_tree_or_none() {
    const N: u32 = 12_000;
    let cfg = test_config(4096);
    let base = SimFs::new(FlushMethod::Fsync);
    {
        let store = open(&base, &cfg);
        let t = store.create_index("live").expect("create");
        for i in 0..300 {
            t.put(&key(i), &val(i)).expect("put");
        }
        store.checkpoint().expect("checkpoint");
        store.close(true).expect("close");
    }
    // How many I/Os the whole run takes: a power-off point at each.
    let total_ops = {
        let sim = base.fork();
        let store = open(&sim, &cfg);
        store.shared().cleaner.paused.store(true, Ordering::Release);
        let before = sim.stats().ops;
        load(&store, "b", N).expect("load");
        store.sync_log().expect("sync");
        store.checkpoint().expect("checkpoint");
        sim.stats().ops - before
    };
    assert!(total_ops > 20, "{total_ops} I/Os");
    let mut saw_tree = 0;
    let mut saw_none = 0;
    for n in 0..total_ops {
        let sim = base.fork();
        let store = open(&sim, &cfg);
        store.shared().cleaner.paused.store(true, Ordering::Release);
        sim.arm_crash_after(n);
        let r = load(&store, "b", N)
            .and_then(|()| store.sync_log())
            .and_then(|()| store.checkpoint());
        assert!(
            r.is_err() || sim.is_down(),
            "ran to the end at point {n} of {total_ops}"
        );
        drop(store);
        sim.crash(CrashMode::Power { sector: 512 }, n);
        // Every fourth point: a second power loss inside recovery and
        // reclaim, at a few of their I/Os.
        if n % 4 == 0 {
            for m in [0u64, 3, 9, 27] {
                sim.arm_crash_after(m);
                let vfs: std::sync::Arc<dyn quire_io::Vfs> = std::sync::Arc::new(sim.clone());
                if let Ok(s) = Store::open(vfs, &cfg) {
                    let _ = reclaim_reservations(&s);
                }
                sim.disarm();
                sim.crash(CrashMode::Power { sector: 512 }, n + m);
            }
        }
        let store = open(&sim, &cfg);
        reclaim_reservations(&store).expect("reclaim");
        match contents(&store, "b") {
            Some(got) => {
                assert_eq!(got, model(N), "crash after {n} I/Os: a partial tree");
                saw_tree += 1;
            }
            None => saw_none += 1,
        }
        assert_eq!(contents(&store, "live"), Some(model(300)), "after {n}");
        assert_checks(&store);
    }
    assert!(saw_none > 0, "no crash point before the registration");
    eprintln!("bulk crash points: {saw_none} without the tree, {saw_tree} with it");
    assert!(saw_tree > 0, "no crash point after the registration");
}
