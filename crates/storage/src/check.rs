//! # Offline verification of a data directory (like `innochecksum`)
//!
//! Reads the system tablespace file directly, without the buffer pool or
//! recovery, and checks:
//!
//! 1. **every page**: checksum, identity (space, page number) and type;
//!    pages below the high-water mark must not be all zero;
//! 2. **the free list**: in range, no cycle, every member a free page, the
//!    count matches the header;
//! 3. **every B+tree** (the index directory and each index it names): each
//!    node passes `node::check`, belongs to its index, sits at the level its
//!    parent implies, keeps its keys within the separators that route to it,
//!    and the leaves' sibling links match their key order;
//! 4. **off-page values** (lob.rs): each chain a tree value refers to
//!    (found by the caller's `lob_refs`, which knows the value format) is
//!    well formed and as long as the reference says; each chain on the
//!    orphan list is well formed and marked as an orphan;
//! 5. **accounting**: every page below the high-water mark is exactly one
//!    of: the header, a node of one tree, a free page, a page of one LOB
//!    chain. Anything else is a leak or a page claimed twice.
//!
//! Run it on a directory that was shut down cleanly (or recovered): a
//! directory left by a crash may legitimately hold pages that only redo
//! can complete.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_io::{File, FileKind, OpenOptions, Vfs};

use crate::btree::node;
use crate::error::{Result, StorageError};
use crate::page::{self, PageCheck, PageId, PageType, PAGE_SIZES};
use crate::space;
use crate::store::SYSTEM_SPACE_FILE;

/// What `check` found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    pub file: PathBuf,
    pub page_size: usize,
    pub pages: u64,
    pub hwm: u32,
    pub free_pages: u64,
    pub trees: u64,
    pub entries: u64,
    /// LOB chains referenced by tree values, and on the orphan list.
    pub lob_chains: u64,
    pub lob_orphans: u64,
    /// Every problem found, each naming the page.
    pub errors: Vec<String>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// A child page and the key range its parent routes to it.
type ChildRange = (u32, Option<Vec<u8>>, Option<Vec<u8>>);
/// Key-value pairs in key order.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Owner {
    Header,
    Free,
    Tree(u32),
    Lob(u32),
    /// Reserved by a bulk load (bulk.rs) that was not registered: any
    /// content, zero or torn included, until the next start frees it.
    Reserved,
}

/// The off-page values a tree's value refers to: (tree name, value) ->
/// references. `check_datadir` passes one that finds none.
pub type LobRefs<'a> = &'a dyn Fn(&str, &[u8]) -> Vec<crate::lob::LobRef>;

struct Checker {
    file: Arc<dyn File>,
    path: PathBuf,
    ps: usize,
    npages: u32,
    owner: HashMap<u32, Owner>,
    report: CheckReport,
}

impl Checker {
    fn err(&mut self, page_no: u32, msg: impl std::fmt::Display) {
        self.report
            .errors
            .push(format!("{} page {page_no}: {msg}", self.path.display()));
    }

    fn read(&self, page_no: u32) -> Result<Vec<u8>> {
        let mut b = vec![0u8; self.ps];
        self.file.read_at(&mut b, page_no as u64 * self.ps as u64)?;
        Ok(b)
    }

    /// Reads a page that must be valid; records the error otherwise.
    fn read_valid(&mut self, page_no: u32) -> Result<Option<Vec<u8>>> {
        if page_no >= self.npages {
            self.err(page_no, "referenced but beyond the end of the file");
            return Ok(None);
        }
        let b = self.read(page_no)?;
        match page::verify(&b, PageId::new(0, page_no)) {
            PageCheck::Valid => Ok(Some(b)),
            _ => Ok(None), // already reported by the page pass
        }
    }

    fn claim(&mut self, page_no: u32, o: Owner) -> bool {
        if let Some(prev) = self.owner.insert(page_no, o) {
            self.err(page_no, format!("claimed twice: as {prev:?} and as {o:?}"));
            return false;
        }
        true
    }

    /// Walks one tree; returns the number of leaf entries.
    fn walk_tree(&mut self, root: u32) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut leaves: Vec<u32> = Vec::new();
        let mut entries = Vec::new();
        self.walk_node(root, root, None, None, None, &mut leaves, &mut entries)?;
        // Sibling links must follow key order.
        for (i, &l) in leaves.iter().enumerate() {
            let Some(p) = self.read_valid(l)? else {
                continue;
            };
            let want_prev = if i == 0 { node::NIL } else { leaves[i - 1] };
            let want_next = leaves.get(i + 1).copied().unwrap_or(node::NIL);
            if node::prev(&p) != want_prev || node::next(&p) != want_next {
                self.err(
                    l,
                    format!(
                        "leaf links prev={} next={} but key order says prev={} next={}",
                        node::prev(&p),
                        node::next(&p),
                        want_prev,
                        want_next
                    ),
                );
            }
        }
        self.report.trees += 1;
        Ok(entries)
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_node(
        &mut self,
        root: u32,
        page_no: u32,
        level: Option<u16>,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        leaves: &mut Vec<u32>,
        entries: &mut Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<()> {
        if !self.claim(page_no, Owner::Tree(root)) {
            return Ok(());
        }
        let Some(p) = self.read_valid(page_no)? else {
            return Ok(());
        };
        if page::page_type(&p) != Some(PageType::Index) {
            self.err(page_no, format!("in tree {root} but not a B+tree node"));
            return Ok(());
        }
        if let Err(e) = node::check(&p) {
            self.err(page_no, format!("malformed node: {e}"));
            return Ok(());
        }
        if node::index_id(&p) != root {
            self.err(
                page_no,
                format!(
                    "belongs to index {} but is in tree {root}",
                    node::index_id(&p)
                ),
            );
        }
        let lvl = node::level(&p);
        if let Some(l) = level {
            if lvl != l {
                self.err(page_no, format!("at level {lvl}, expected {l}"));
                return Ok(());
            }
        }
        let n = node::count(&p);
        for i in 0..n {
            let k = node::key(&p, i);
            if lo.is_some_and(|lo| k < lo) || hi.is_some_and(|hi| k >= hi) {
                self.err(
                    page_no,
                    format!("key #{i} outside the range its parent routes here"),
                );
            }
        }
        if lvl == 0 {
            if n == 0 && page_no != root {
                self.err(page_no, "empty leaf that is not the root");
            }
            leaves.push(page_no);
            for i in 0..n {
                entries.push((node::key(&p, i).to_vec(), node::value(&p, i).to_vec()));
            }
            return Ok(());
        }
        // Children: leftmost covers [lo, key0), cell i covers [key i, key i+1).
        let mut children: Vec<ChildRange> = Vec::new();
        let first_hi = if n > 0 {
            Some(node::key(&p, 0).to_vec())
        } else {
            hi.map(|h| h.to_vec())
        };
        children.push((node::leftmost(&p), lo.map(|l| l.to_vec()), first_hi));
        for i in 0..n {
            let c_lo = Some(node::key(&p, i).to_vec());
            let c_hi = if i + 1 < n {
                Some(node::key(&p, i + 1).to_vec())
            } else {
                hi.map(|h| h.to_vec())
            };
            children.push((node::child(&p, i), c_lo, c_hi));
        }
        for (c, clo, chi) in children {
            if c == node::NIL {
                self.err(page_no, "internal node with a NIL child");
                continue;
            }
            self.walk_node(
                root,
                c,
                Some(lvl - 1),
                clo.as_deref(),
                chi.as_deref(),
                leaves,
                entries,
            )?;
        }
        Ok(())
    }
}

impl Checker {
    /// Claims and checks one LOB chain: referenced with `want_len`, or an
    /// orphan (None: its tail may be partly freed). Returns the orphan
    /// list's next link, or None when the chain is unusable.
    fn lob_chain(&mut self, first: u32, want_len: Option<u64>) -> Result<Option<u32>> {
        let limit = self.npages;
        let file = self.file.clone();
        let ps = self.ps;
        let read = |p: u32| {
            if p >= limit {
                return None;
            }
            let mut b = vec![0u8; ps];
            file.read_at(&mut b, p as u64 * ps as u64).ok()?;
            (page::verify(&b, PageId::new(0, p)) == PageCheck::Valid).then_some(b)
        };
        let (pages, total, data, orphan, next) = match crate::lob::chain_pages(first, read, limit) {
            Ok(c) => c,
            Err(e) => {
                self.err(first, e);
                return Ok(None);
            }
        };
        for &pg in &pages {
            if !self.claim(pg, Owner::Lob(first)) {
                return Ok(None);
            }
        }
        match want_len {
            Some(len) => {
                if orphan {
                    self.err(
                        first,
                        "LOB chain referenced by a row but on the orphan list",
                    );
                }
                if total != len || data != len {
                    self.err(
                        first,
                        format!("LOB chain holds {data} of {total} bytes, its row says {len}"),
                    );
                }
            }
            None => {
                if !orphan {
                    self.err(first, "on the LOB orphan list but not marked an orphan");
                }
                if data > total {
                    self.err(first, format!("orphan LOB holds {data} bytes of {total}"));
                }
            }
        }
        Ok(Some(next))
    }
}

/// Finds the page size by trying each allowed size on page 0.
pub(crate) fn detect_page_size(file: &Arc<dyn File>) -> Result<Option<usize>> {
    let len = file.len()?;
    for &ps in PAGE_SIZES.iter() {
        if len < ps as u64 {
            continue;
        }
        // Aligned: the file may be open with O_DIRECT.
        let mut b = quire_io::AlignedBuf::new(ps, 4096);
        file.read_at(&mut b, 0)?;
        if page::verify(&b, PageId::new(0, 0)) == PageCheck::Valid {
            return Ok(Some(ps));
        }
    }
    Ok(None)
}

/// Checks the data directory at `datadir` (no tree value refers to an
/// off-page value: storage-level tests; the engine passes its own).
pub fn check_datadir(vfs: &Arc<dyn Vfs>, datadir: &Path) -> Result<CheckReport> {
    check_datadir_with(vfs, datadir, &|_, _| Vec::new())
}

/// Checks the data directory at `datadir`; `lob_refs` reads a tree value's
/// references to off-page values.
pub fn check_datadir_with(
    vfs: &Arc<dyn Vfs>,
    datadir: &Path,
    lob_refs: LobRefs<'_>,
) -> Result<CheckReport> {
    let path = datadir.join(SYSTEM_SPACE_FILE);
    if !vfs.exists(&path)? {
        return Err(StorageError::BadDatadir(format!(
            "{} not found: is {} a quire data directory?",
            path.display(),
            datadir.display()
        )));
    }
    let file = vfs.open(&path, OpenOptions::existing(FileKind::Other))?;
    let Some(ps) = detect_page_size(&file)? else {
        return Ok(CheckReport {
            file: path.clone(),
            errors: vec![format!(
                "{} page 0: not a valid tablespace header at any page size (corrupt or not a quire file)",
                path.display()
            )],
            ..Default::default()
        });
    };
    let npages = (file.len()? / ps as u64) as u32;
    let mut ck = Checker {
        file,
        path: path.clone(),
        ps,
        npages,
        owner: HashMap::new(),
        report: CheckReport {
            file: path,
            page_size: ps,
            pages: npages as u64,
            ..Default::default()
        },
    };
    let hdr_page = ck.read(0)?;
    let Some(h) = space::read_header(&hdr_page) else {
        ck.err(0, "page 0 is not a tablespace header");
        return Ok(ck.report);
    };
    ck.report.hwm = h.hwm;
    ck.claim(0, Owner::Header);
    // 1. every page (reported after the directory says which pages are
    // reserved by a bulk load: those may hold anything)
    let mut bad_pages: Vec<(u32, String)> = Vec::new();
    for p in 0..npages {
        let b = ck.read(p)?;
        match page::verify(&b, PageId::new(0, p)) {
            PageCheck::Valid => {}
            PageCheck::Zero if p >= h.hwm => {}
            PageCheck::Zero => bad_pages.push((
                p,
                "below the high-water mark but never written (all zero)".into(),
            )),
            PageCheck::Bad(why) => bad_pages.push((p, why)),
        }
    }
    if h.hwm > npages {
        ck.err(
            0,
            format!("high-water mark {} beyond the file's {npages} pages", h.hwm),
        );
    }
    // 2. free list
    let mut p = h.free_head;
    let mut n = 0u64;
    while p != node::NIL {
        if p == 0 || p >= h.hwm {
            ck.err(p, "free list points outside [1, hwm)");
            break;
        }
        if !ck.claim(p, Owner::Free) {
            break;
        }
        n += 1;
        let Some(b) = ck.read_valid(p)? else { break };
        if page::page_type(&b) != Some(PageType::Free) {
            ck.err(p, "on the free list but not a free page");
            break;
        }
        p = page::get_u32(&b, space::OFF_FREE_NEXT);
    }
    ck.report.free_pages = n;
    if n != h.free_count as u64 {
        ck.err(
            0,
            format!("free list has {n} pages, header says {}", h.free_count),
        );
    }
    // 3. trees
    if h.dir_root == node::NIL {
        ck.err(0, "no index directory");
        return Ok(ck.report);
    }
    let dir = ck.walk_tree(h.dir_root)?;
    for (name, v) in dir {
        if crate::bulk::is_reservation_key(&name) {
            match crate::bulk::decode_reservation(&v) {
                Some((first, count)) => {
                    for p in first..first.saturating_add(count) {
                        ck.claim(p, Owner::Reserved);
                    }
                }
                None => ck.err(h.dir_root, "malformed bulk-load reservation"),
            }
            continue;
        }
        let Ok(root) = <[u8; 4]>::try_from(v.as_slice()).map(u32::from_le_bytes) else {
            ck.err(
                h.dir_root,
                format!(
                    "directory entry {:?} is malformed",
                    String::from_utf8_lossy(&name)
                ),
            );
            continue;
        };
        let entries = ck.walk_tree(root)?;
        ck.report.entries += entries.len() as u64;
        let tree = String::from_utf8_lossy(&name).into_owned();
        for (_, v) in &entries {
            for r in lob_refs(&tree, v) {
                ck.lob_chain(r.first, Some(r.len))?;
                ck.report.lob_chains += 1;
            }
        }
    }
    // Page errors first, as found by the page pass.
    let tree_errors = std::mem::take(&mut ck.report.errors);
    for (p, why) in bad_pages {
        if ck.owner.get(&p) != Some(&Owner::Reserved) {
            ck.err(p, why);
        }
    }
    ck.report.errors.extend(tree_errors);
    // 4. the orphan list
    let mut p = match page::get_u32(&hdr_page, space::OFF_LOB_ORPHANS) {
        0 => node::NIL,
        p => p,
    };
    while p != node::NIL {
        match ck.lob_chain(p, None)? {
            Some(next) => p = next,
            None => break,
        }
        ck.report.lob_orphans += 1;
    }
    // 5. accounting
    for p in 1..h.hwm.min(npages) {
        if !ck.owner.contains_key(&p) {
            ck.err(
                p,
                "leaked: below the high-water mark but in no tree, not free and in no LOB chain",
            );
        }
    }
    Ok(ck.report)
}

/// All entries of the named index, read offline (tests, crash checks).
pub fn read_index(vfs: &Arc<dyn Vfs>, datadir: &Path, name: &str) -> Result<Option<Entries>> {
    let path = datadir.join(SYSTEM_SPACE_FILE);
    let file = vfs.open(&path, OpenOptions::existing(FileKind::Other))?;
    let ps = detect_page_size(&file)?
        .ok_or_else(|| StorageError::BadDatadir(format!("{}: bad page 0", path.display())))?;
    let npages = (file.len()? / ps as u64) as u32;
    let mut ck = Checker {
        file,
        path,
        ps,
        npages,
        owner: HashMap::new(),
        report: CheckReport::default(),
    };
    let h = space::read_header(&ck.read(0)?)
        .ok_or_else(|| StorageError::BadDatadir("page 0 is not a tablespace header".into()))?;
    let dir = ck.walk_tree(h.dir_root)?;
    for (k, v) in dir {
        if k == name.as_bytes() {
            let root = u32::from_le_bytes(v.as_slice().try_into().unwrap_or([0xff; 4]));
            return Ok(Some(ck.walk_tree(root)?));
        }
    }
    Ok(None)
}
