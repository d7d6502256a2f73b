//! B+tree tests: readable scripts (`testscripts/*.txt`), a randomized model
//! test, and concurrent readers and writers.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;

use quire_config::Config;
use quire_io::{FlushMethod, Rng, SimFs, Vfs};

use crate::check::check_datadir;
use crate::page::PageId;
use crate::space;
use crate::store::Store;
use crate::Tree;

pub(crate) fn test_config(page_size: u32) -> Config {
    Config {
        datadir: PathBuf::from("/t/data"),
        innodb_page_size: page_size,
        innodb_buffer_pool_size: 5 << 20,
        innodb_redo_log_capacity: 8 << 20,
        innodb_log_buffer_size: 256 << 10,
        innodb_log_write_ahead_size: 4096.min(page_size),
        ..Config::default()
    }
}

pub(crate) fn open(sim: &SimFs, cfg: &Config) -> Store {
    let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
    Store::open(vfs, cfg).expect("open test store")
}

fn show(v: &[u8]) -> String {
    if v.len() > 16 && v.iter().all(|&b| b == b'x') {
        format!("v{}", v.len())
    } else {
        String::from_utf8_lossy(v).into_owned()
    }
}

fn bounds(arg: Option<&str>) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let Some(r) = arg else {
        return (Bound::Unbounded, Bound::Unbounded);
    };
    let (lo, hi) = r.split_once("..").expect("range LO..HI");
    let b = |s: &str| {
        if s.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(s.as_bytes().to_vec())
        }
    };
    (b(lo), b(hi))
}

fn num_range(r: &str) -> std::ops::Range<u32> {
    let (a, b) = r.split_once("..").expect("range A..B");
    a.parse().expect("number")..b.parse().expect("number")
}

fn run_command(store: &Store, tree: &Tree, line: &str) -> Vec<String> {
    let mut w = line.split_whitespace();
    let cmd = w.next().expect("command");
    let mut out = Vec::new();
    match cmd {
        "put" => {
            let (k, v) = (w.next().expect("key"), w.next().expect("value"));
            tree.put(k.as_bytes(), v.as_bytes()).expect("put");
        }
        "get" => match tree.get(w.next().expect("key").as_bytes()).expect("get") {
            Some(v) => out.push(show(&v)),
            None => out.push("(none)".into()),
        },
        "delete" => {
            if tree
                .delete(w.next().expect("key").as_bytes())
                .expect("delete")
                .is_none()
            {
                out.push("(absent)".into());
            }
        }
        "scan" | "rscan" => {
            let (lo, hi) = bounds(w.next());
            for e in tree.range(lo, hi, cmd == "rscan") {
                let (k, v) = e.expect("scan");
                out.push(format!("{}={}", show(&k), show(&v)));
            }
            if out.is_empty() {
                out.push("(empty)".into());
            }
        }
        "fill" => {
            let r = num_range(w.next().expect("range"));
            let n: usize = w.next().expect("size").parse().expect("size");
            for i in r {
                tree.put(format!("{i:04}").as_bytes(), &vec![b'x'; n])
                    .expect("fill");
            }
        }
        "drain" => {
            for i in num_range(w.next().expect("range")) {
                tree.delete(format!("{i:04}").as_bytes()).expect("drain");
            }
        }
        "count" => out.push(tree.scan_all().expect("scan").len().to_string()),
        "check" => {
            store.checkpoint().expect("checkpoint");
            let vfs = store.shared().vfs.clone();
            let r = check_datadir(&vfs, store.datadir()).expect("check");
            if r.is_ok() {
                out.push("ok".into());
            } else {
                out.extend(r.errors);
            }
        }
        "free" => {
            let g = store.shared().pool.read(PageId::new(0, 0)).expect("header");
            let h = space::read_header(g.bytes()).expect("space header");
            // header, directory root and this tree's root stay in use
            let in_use = h.hwm - 3 - h.free_count;
            out.push(if in_use == 0 {
                "all pages free".into()
            } else {
                format!("{in_use} pages still in use")
            });
        }
        other => panic!("unknown script command {other}"),
    }
    out
}

/// Runs a script: each command's output must equal the `>` lines after it.
fn run_script(name: &str, text: &str, page_size: u32) {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(page_size));
    let tree = store.create_index("t").expect("create index");
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        assert!(
            !line.starts_with('>'),
            "{name}: expected output without a command: {line}"
        );
        let mut want = Vec::new();
        while i < lines.len() && lines[i].trim_start().starts_with('>') {
            want.push(lines[i].trim_start()[1..].trim().to_string());
            i += 1;
        }
        let got = run_command(&store, &tree, line);
        assert_eq!(got, want, "{name}: `{line}`");
    }
}

#[test]
fn script_basic() {
    run_script("basic.txt", include_str!("testscripts/basic.txt"), 16384);
}

#[test]
fn script_splits() {
    run_script("splits.txt", include_str!("testscripts/splits.txt"), 4096);
}

/// Random puts and deletes against a BTreeMap, with scans in both
/// directions over random ranges, then the offline checker.
#[test]
fn model_random_ops() {
    for seed in [1u64, 2, 3] {
        let sim = SimFs::new(FlushMethod::Fsync);
        let store = open(&sim, &test_config(4096));
        let tree = store.create_index("m").expect("create");
        let mut model = BTreeMap::new();
        let mut rng = Rng::new(seed);
        for step in 0..6000 {
            let k = format!("{:05}", rng.below(1500)).into_bytes();
            if rng.chance(0.6) {
                let v = vec![rng.below(250) as u8; rng.range(0, 600) as usize];
                tree.put(&k, &v).expect("put");
                model.insert(k, v);
            } else {
                let had = tree.delete(&k).expect("delete").is_some();
                assert_eq!(
                    had,
                    model.remove(&k).is_some(),
                    "delete result at step {step}"
                );
            }
            if step % 500 == 0 {
                let a = format!("{:05}", rng.below(1500)).into_bytes();
                let b = format!("{:05}", rng.below(1500)).into_bytes();
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                let want: Vec<_> = model
                    .range(lo.clone()..hi.clone())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let fwd: Vec<_> = tree
                    .range(
                        Bound::Included(lo.clone()),
                        Bound::Excluded(hi.clone()),
                        false,
                    )
                    .collect::<Result<_, _>>()
                    .expect("scan");
                assert_eq!(fwd, want, "forward range at step {step}");
                let mut back: Vec<_> = tree
                    .range(Bound::Included(lo), Bound::Excluded(hi), true)
                    .collect::<Result<_, _>>()
                    .expect("rscan");
                back.reverse();
                assert_eq!(back, want, "backward range at step {step}");
            }
        }
        let all: BTreeMap<_, _> = tree.scan_all().expect("scan").into_iter().collect();
        assert_eq!(all, model);
        for (k, v) in &model {
            assert_eq!(tree.get(k).expect("get").as_ref(), Some(v));
        }
        store.checkpoint().expect("checkpoint");
        let vfs = store.shared().vfs.clone();
        let r = check_datadir(&vfs, store.datadir()).expect("check");
        assert!(r.is_ok(), "{:?}", r.errors);
        assert_eq!(r.entries as usize, model.len());
    }
}

#[test]
fn oversized_entries_are_rejected_clearly() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(4096));
    let tree = store.create_index("big").expect("create");
    let e = tree.put(b"k", &vec![0u8; 4000]).expect_err("too large");
    let msg = e.to_string();
    assert!(
        msg.contains("larger than the maximum") && msg.contains("innodb_page_size=4096"),
        "{msg}"
    );
    let e = tree.put(&vec![1u8; 2000], b"v").expect_err("key too long");
    assert!(e.to_string().contains("key of 2000 bytes"), "{e}");
    // The store is still usable.
    tree.put(b"k", b"v").expect("small put");
    assert_eq!(tree.get(b"k").expect("get"), Some(b"v".to_vec()));
}

/// Writers on disjoint key sets and readers scanning at the same time;
/// the final content is exactly the union of what the writers did, and
/// every scan saw keys in strictly increasing order.
#[test]
fn concurrent_readers_and_writers() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(4096));
    let tree = store.create_index("c").expect("create");
    let writers = 4u64;
    let per = 3000u64;
    std::thread::scope(|s| {
        for w in 0..writers {
            let tree = &tree;
            s.spawn(move || {
                let mut rng = Rng::new(w + 100);
                for i in 0..per {
                    let k = format!("{:06}-{w}", (i * 7919) % per);
                    tree.put(k.as_bytes(), &vec![w as u8; rng.range(1, 300) as usize])
                        .expect("put");
                    if i % 3 == 0 {
                        let d = format!("{:06}-{w}", (i * 7919 + 13) % per);
                        tree.delete(d.as_bytes()).expect("delete");
                    }
                }
            });
        }
        for r in 0..2 {
            let tree = &tree;
            s.spawn(move || {
                for _ in 0..40 {
                    let mut last: Option<Vec<u8>> = None;
                    for e in tree.range(Bound::Unbounded, Bound::Unbounded, r == 1) {
                        let (k, _) = e.expect("scan");
                        if let Some(l) = &last {
                            if r == 0 {
                                assert!(k > *l, "forward scan out of order");
                            } else {
                                assert!(k < *l, "backward scan out of order");
                            }
                        }
                        last = Some(k);
                    }
                }
            });
        }
    });
    // Replay each writer's sequence single-threaded to get the expected set.
    let mut model = BTreeMap::new();
    for w in 0..writers {
        for i in 0..per {
            model.insert(format!("{:06}-{w}", (i * 7919) % per), ());
            if i % 3 == 0 {
                model.remove(&format!("{:06}-{w}", (i * 7919 + 13) % per));
            }
        }
    }
    let got: Vec<String> = tree
        .scan_all()
        .expect("scan")
        .into_iter()
        .map(|(k, _)| String::from_utf8(k).expect("utf8"))
        .collect();
    let want: Vec<String> = model.into_keys().collect();
    assert_eq!(got, want);
    store.checkpoint().expect("checkpoint");
    let vfs = store.shared().vfs.clone();
    let r = check_datadir(&vfs, store.datadir()).expect("check");
    assert!(r.is_ok(), "{:?}", r.errors);
}

/// `sample_leaves`: every leaf of a small tree in key order (their entries
/// are the whole tree), an even spread of a few leaves of a larger one,
/// and the leaf count agrees with a walk of the leaf chain.
#[test]
fn sample_leaves_counts_and_spreads() {
    let sim = SimFs::new(FlushMethod::Fsync);
    let store = open(&sim, &test_config(4096));
    let tree = store.create_index("s").expect("create");
    let one = tree.sample_leaves(20).expect("sample empty");
    assert_eq!((one.leaf_pages, one.leaves.len()), (1, 1));
    assert!(one.leaves[0].is_empty());
    for i in 0..20_000u32 {
        tree.put(&i.to_be_bytes(), &[7u8; 40]).expect("put");
    }
    let all = tree.sample_leaves(usize::MAX).expect("sample all");
    assert!(all.leaf_pages > 100, "{}", all.leaf_pages);
    assert_eq!(all.leaves.len() as u64, all.leaf_pages);
    let keys: Vec<Vec<u8>> = all
        .leaves
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    let want: Vec<Vec<u8>> = (0..20_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
    assert_eq!(keys, want);
    let some = tree.sample_leaves(10).expect("sample 10");
    assert_eq!(some.leaf_pages, all.leaf_pages);
    assert_eq!(some.leaves.len(), 10);
    let firsts: Vec<u32> = some
        .leaves
        .iter()
        .map(|l| u32::from_be_bytes(l[0].0.as_slice().try_into().expect("4 bytes")))
        .collect();
    assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{firsts:?}");
    // Spread: the first sampled leaf is in the first tenth of the keys,
    // the last in the last tenth.
    assert!(firsts[0] < 2_000 && firsts[9] >= 18_000, "{firsts:?}");
}

/// `apply_batch`: puts (enough to split nodes) and deletes land together,
/// and a power cut at any I/O leaves all of them or none (one mtr).
#[test]
fn a_batch_is_all_or_nothing_across_a_crash() {
    let batch: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0..120u32)
        .map(|i| (format!("k{i:04}").into_bytes(), Some(vec![i as u8; 60])))
        .chain([(b"old".to_vec(), None)])
        .collect();
    let mut outcomes = (0, 0);
    for n in 0..200u64 {
        let sim = SimFs::new(FlushMethod::Fsync);
        let cfg = test_config(4096);
        {
            let store = open(&sim, &cfg);
            let tree = store.create_index("t").expect("create");
            tree.put(b"old", b"x").expect("put");
            store.checkpoint().expect("checkpoint");
            sim.arm_crash_after(n);
            let _ = tree.apply_batch(&batch);
            let _ = store.sync_log();
        }
        let fired = sim.is_down();
        sim.disarm();
        sim.crash(quire_io::CrashMode::Power { sector: 512 }, n);
        let store = open(&sim, &cfg);
        let tree = store.index("t").expect("dir").expect("tree");
        let all = tree.scan_all().expect("scan");
        if all.len() == 120 {
            assert!(all.iter().all(|(k, _)| k != b"old"), "crash point {n}");
            outcomes.1 += 1;
        } else {
            assert_eq!(
                all,
                vec![(b"old".to_vec(), b"x".to_vec())],
                "crash point {n}"
            );
            outcomes.0 += 1;
        }
        drop(store);
        let vfs: Arc<dyn Vfs> = Arc::new(sim.clone());
        let r = check_datadir(&vfs, &cfg.datadir).expect("check");
        assert!(r.is_ok(), "crash point {n}: {:?}", r.errors);
        if !fired {
            assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
            return;
        }
    }
    panic!("the batch did not finish within 200 I/O operations");
}
