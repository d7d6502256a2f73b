//! LOB chains: round trips across many mini-transactions, adoption and
//! orphaning atomic with tree changes, reclaiming, the checker's view, and
//! crashes between a chain and the row that should own it.

use std::collections::BTreeMap;
use std::sync::Arc;

use quire_io::{CrashMode, FlushMethod, SimFs, Vfs};

use super::*;
use crate::btree::tests::{open, test_config};
use crate::check::{check_datadir_with, CheckReport};
use crate::store::Store;

/// Tree values in these tests are a LOB reference, or "-" for none.
fn refs_of(_: &str, v: &[u8]) -> Vec<LobRef> {
    LobRef::decode(v).into_iter().collect()
}

fn check(store: &Store) -> CheckReport {
    store.checkpoint().expect("checkpoint");
    let vfs: Arc<dyn Vfs> = store.shared().vfs.clone();
    let r = check_datadir_with(&vfs, store.datadir(), &refs_of).expect("check");
    assert!(r.is_ok(), "{:?}", r.errors);
    r
}

fn value(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

fn ref_bytes(r: &LobRef) -> Vec<u8> {
    let mut b = Vec::new();
    r.encode(&mut b);
    b
}

/// Stores `v` under `key`, orphaning what the key referred to before.
fn store_value(store: &Store, key: &[u8], v: &[u8]) -> LobRef {
    let sh = store.shared();
    let t = store.index("d").expect("dir").expect("tree");
    let old = t.get(key).expect("get").and_then(|b| LobRef::decode(&b));
    let r = write(sh, v).expect("write");
    t.put_with(key, &ref_bytes(&r), &mut |m| {
        adopt(m, &r)?;
        if let Some(o) = &old {
            orphan(m, o)?;
        }
        Ok(())
    })
    .expect("put");
    if let Some(o) = &old {
        reclaim(sh, o).expect("reclaim");
    }
    r
}

#[test]
fn round_trip_sizes_and_reclaim() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let cfg = test_config(4096);
    let store = open(&sim, &cfg);
    store.create_index("d").expect("create");
    let per = data_per_page(4096);
    let sizes = [0, 1, per - 1, per, per + 1, 10 * per, 300 * per + 7];
    let mut model = BTreeMap::new();
    for (i, &n) in sizes.iter().enumerate() {
        let key = format!("k{i}").into_bytes();
        let v = value(n, i as u8);
        let r = store_value(&store, &key, &v);
        assert_eq!(read(store.shared(), &r).expect("read"), v);
        model.insert(key, v);
    }
    let r = check(&store);
    assert_eq!(r.lob_chains, sizes.len() as u64);
    assert_eq!(r.lob_orphans, 0);
    // Replace every value: the old chains are reclaimed, the pages reused.
    let hwm = r.hwm;
    for (i, &n) in sizes.iter().enumerate() {
        let key = format!("k{i}").into_bytes();
        let v = value(n, 100 + i as u8);
        store_value(&store, &key, &v);
        model.insert(key, v);
    }
    let t = store.index("d").expect("dir").expect("tree");
    for (k, v) in &model {
        let r = LobRef::decode(&t.get(k).expect("get").expect("row")).expect("ref");
        assert_eq!(&read(store.shared(), &r).expect("read"), v);
    }
    let r2 = check(&store);
    assert_eq!(r2.lob_chains, sizes.len() as u64);
    assert!(
        r2.hwm < hwm * 2,
        "freed pages are reused: hwm {} after {hwm}",
        r2.hwm
    );
    // A reference whose checksum does not match is an error, not data.
    let k0 = LobRef::decode(&t.get(b"k5").expect("get").expect("row")).expect("ref");
    let wrong = LobRef {
        crc: k0.crc ^ 1,
        ..k0
    };
    assert!(read(store.shared(), &wrong).is_err());
    assert!(adopt(&mut crate::mtr::Mtr::new(&store.shared().pool), &k0).is_err());
}

/// Crashes at every point of a run of chain writes: after recovery and
/// `reclaim_orphans`, every acknowledged value reads back whole and no
/// page is leaked or claimed twice.
#[test]
fn crash_between_chain_and_row_leaks_nothing() {
    for seed in 0..12u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let cfg = test_config(4096);
        let mut acked: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        {
            let store = open(&sim, &cfg);
            store.create_index("d").expect("create");
            store.sync_log().expect("sync");
            for i in 0..(4 + seed as usize % 5) {
                let key = format!("k{}", i % 3).into_bytes();
                let v = value(1000 + i * 3000, i as u8);
                store_value(&store, &key, &v);
                store.sync_log().expect("sync");
                acked.insert(key, v);
            }
            // An unowned chain in flight at the crash.
            write(store.shared(), &value(20_000, 9)).expect("write");
            store.close(false).expect("close");
        }
        sim.crash(CrashMode::Power { sector: 512 }, seed);
        let store = open(&sim, &cfg);
        let n = reclaim_orphans(store.shared()).expect("reclaim orphans");
        assert!(n <= 1, "seed {seed}: {n} orphans");
        let t = store.index("d").expect("dir").expect("tree");
        for (k, v) in &acked {
            let r = LobRef::decode(&t.get(k).expect("get").expect("acked row")).expect("ref");
            assert_eq!(&read(store.shared(), &r).expect("read"), v, "seed {seed}");
        }
        let r = check(&store);
        assert_eq!(r.lob_orphans, 0);
        assert_eq!(r.lob_chains, acked.len() as u64);
    }
}
