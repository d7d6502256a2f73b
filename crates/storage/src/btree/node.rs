//! # B+tree nodes: the slotted page
//!
//! One B+tree node is one page. Entries have variable-length keys and
//! values, so a node cannot be a plain array of fixed-size records. It is a
//! *slotted page* instead: the cell bodies (key and value bytes) live in a
//! heap that grows down from the end of the page, and a small array of
//! 2-byte *slots* right after the header points at them, kept sorted by key.
//! This gives us:
//!
//! * **binary search** over the slots — every slot has the same size, so
//!   slot `i` is at a computed address even though the cells are not;
//! * **cheap inserts and deletes** — only the slot array shifts (a
//!   `copy_within` of `2 * count` bytes at most); cell bodies never move on
//!   the common path;
//! * **one free gap** between slot array and heap that both grow into, so a
//!   node never has to decide up front how many entries it will hold.
//!
//! Deleting (or growing the value of) a cell leaves its old body behind as
//! *garbage* inside the heap. Garbage is counted, and counts as free space:
//! when an insert needs more than the contiguous gap but no more than gap +
//! garbage, the node is compacted first ([`compact`]).
//!
//! ## Layout
//!
//! All integers little-endian. Offsets are from the start of the page.
//!
//! ```text
//!  offset  size  field
//!  ------  ----  ---------------------------------------------------------
//!       0    24  file header (page.rs): checksum, space, page no,
//!                type = PageType::Index, reserved, page LSN
//!      24     2  level            0 = leaf, parents are child level + 1
//!      26     2  n_cells          number of slots / live cells
//!      28     4  heap_top         lowest offset of the cell heap (dead cells
//!                                 included); page_size when the heap is empty
//!      32     4  garbage_bytes    bytes of dead cells inside the heap
//!      36     4  prev             left sibling page number, NIL if none
//!      40     4  next             right sibling page number, NIL if none
//!      44     4  leftmost_child   internal nodes: child for keys < key(0);
//!                                 NIL in leaves
//!      48     4  index_id         which index this node belongs to
//!      52         NODE_HEADER_END: slot array starts here
//!
//!  +-------------+-------------+----------------+---------//----+---------+
//!  | file header | node header | slot 0 .. n-1  |   free gap    |  cells  |
//!  |   24 bytes  |   28 bytes  | u16 each, in   |  (all zero)   | heap    |
//!  |             |             | key order      |               | grows ← |
//!  +-------------+-------------+----------------+---------//----+---------+
//!  0             24            52          52+2n            heap_top  page_size
//!
//!  cell at offset `slot[i]`:
//!  +-------------+-------------+-------------------+---------------------+
//!  | key_len u16 | val_len u16 | key (key_len B)   | value (val_len B)   |
//!  +-------------+-------------+-------------------+---------------------+
//! ```
//!
//! A slot is a `u16` offset. Pages are at most 64 KiB and a cell is at
//! least 4 bytes, so every cell offset is at most 65532 and fits; `heap_top`
//! is a `u32` because an empty heap puts it at `page_size` itself (65536 on
//! the largest pages).
//!
//! Keys are memcomparable: plain `[u8]` comparison is the index order. In
//! internal nodes every value is exactly 4 bytes, a child page number: the
//! child of cell `i` holds the keys `>= key(i)` (and `< key(i + 1)`); keys
//! below `key(0)` live under `leftmost_child`. An internal node may have
//! zero cells and only a leftmost child.
//!
//! Entries are limited to `key.len() + value.len() <=
//! max_cell_payload(page_size)` ([`insert`] refuses anything larger). A
//! separator key copied into a parent carries a 4-byte value, so the tree
//! limits keys to `max_cell_payload - 4` (`btree::max_key_bytes`).
//!
//! ## Invariants ([`check`] enforces all of them)
//!
//! 1. The page type is `Index`; `level` is below [`MAX_LEVEL`]; the page
//!    size is within 512..=65536.
//! 2. `NODE_HEADER_END + 2 * n_cells <= heap_top <= page_size`
//!    (the slot array and the heap do not overlap).
//! 3. Every cell lies inside `[heap_top, page_size)`, including its 4-byte
//!    header and its key and value bytes; no two cells overlap (so no two
//!    slots share a cell).
//! 4. Keys are strictly increasing in slot order.
//! 5. Accounting: the sum of live cell bodies plus `garbage_bytes` equals
//!    `page_size - heap_top`. Equivalently, `used_bytes + free_bytes +
//!    NODE_HEADER_END == page_size`.
//! 6. Internal nodes: every value is 4 bytes and no cell's child is `NIL`.
//!    Leaves: `leftmost_child` is `NIL`. (An internal node's leftmost child
//!    is *not* checked: between [`init`] and [`set_leftmost`] — separate redo
//!    records — it is legitimately `NIL`. Tree-level checks cover it.)
//! 7. The free gap `[NODE_HEADER_END + 2 * n_cells, heap_top)` is all zero.
//!    Every operation zeroes the space it gives back to the gap. This makes
//!    [`image_extent`] lossless: a zeroed page plus the logged head and heap
//!    is byte-for-byte the original page.
//!
//! ## Determinism
//!
//! Redo replays these calls, so every mutation is a pure function of the
//! page bytes and its arguments: the same page and the same call always give
//! the same bytes. Compaction lays the cells out in slot order from the end
//! of the page (cell 0 highest), which is also the layout that appending in
//! key order produces naturally.

use crate::page::{get_u16, get_u32, put_u16, put_u32, FIL_HEADER_BYTES, OFF_TYPE};
use crate::page::{page_type_raw, PageType};

/// "No page": sibling and child pointers that point nowhere.
pub const NIL: u32 = u32::MAX;

const OFF_LEVEL: usize = FIL_HEADER_BYTES; // 24
const OFF_N_CELLS: usize = OFF_LEVEL + 2; // 26
const OFF_HEAP_TOP: usize = OFF_N_CELLS + 2; // 28
const OFF_GARBAGE: usize = OFF_HEAP_TOP + 4; // 32
const OFF_PREV: usize = OFF_GARBAGE + 4; // 36
const OFF_NEXT: usize = OFF_PREV + 4; // 40
const OFF_LEFTMOST: usize = OFF_NEXT + 4; // 44
const OFF_INDEX_ID: usize = OFF_LEFTMOST + 4; // 48

/// First byte of the slot array (end of file header + node header).
pub const NODE_HEADER_END: usize = OFF_INDEX_ID + 4; // 52

/// Bytes of a cell's own header (key_len, val_len).
const CELL_HEADER: usize = 4;
/// Bytes of one slot.
const SLOT: usize = 2;

/// Sanity bound on `level` used by [`check`]. With at least two children
/// per internal node and 2^32 page numbers, a real tree is at most 33 levels
/// high.
pub const MAX_LEVEL: u16 = 64;

/// Smallest page [`check`] accepts. Real pages are `page::PAGE_SIZES`
/// (4 KiB..64 KiB); smaller ones are allowed for tests.
const MIN_PAGE: usize = 512;
/// Largest page: slots are `u16` offsets.
const MAX_PAGE: usize = 65536;

// ---------------------------------------------------------------------------
// Header access
// ---------------------------------------------------------------------------

/// Formats `page` as an empty node. Keeps the file header's space id, page
/// number and LSN; sets the type to `Index`; zeroes the whole body; sets
/// prev, next and leftmost child to [`NIL`].
pub fn init(page: &mut [u8], level: u16, index_id: u32) {
    let ps = page.len();
    debug_assert!((MIN_PAGE..=MAX_PAGE).contains(&ps), "page size {ps}");
    put_u16(page, OFF_TYPE, PageType::Index as u16);
    page[FIL_HEADER_BYTES..].fill(0);
    put_u16(page, OFF_LEVEL, level);
    put_u16(page, OFF_N_CELLS, 0);
    set_heap_top(page, ps);
    set_garbage(page, 0);
    put_u32(page, OFF_PREV, NIL);
    put_u32(page, OFF_NEXT, NIL);
    put_u32(page, OFF_LEFTMOST, NIL);
    put_u32(page, OFF_INDEX_ID, index_id);
}

/// Height above the leaves: 0 for a leaf.
#[inline]
pub fn level(page: &[u8]) -> u16 {
    get_u16(page, OFF_LEVEL)
}

#[inline]
pub fn is_leaf(page: &[u8]) -> bool {
    level(page) == 0
}

#[inline]
pub fn index_id(page: &[u8]) -> u32 {
    get_u32(page, OFF_INDEX_ID)
}

/// Number of cells (entries) in the node.
#[inline]
pub fn count(page: &[u8]) -> usize {
    get_u16(page, OFF_N_CELLS) as usize
}

#[inline]
fn set_count(page: &mut [u8], n: usize) {
    put_u16(page, OFF_N_CELLS, n as u16);
}

#[inline]
fn heap_top(page: &[u8]) -> usize {
    get_u32(page, OFF_HEAP_TOP) as usize
}

#[inline]
fn set_heap_top(page: &mut [u8], v: usize) {
    put_u32(page, OFF_HEAP_TOP, v as u32);
}

#[inline]
fn garbage(page: &[u8]) -> usize {
    get_u32(page, OFF_GARBAGE) as usize
}

#[inline]
fn set_garbage(page: &mut [u8], v: usize) {
    put_u32(page, OFF_GARBAGE, v as u32);
}

/// Internal nodes: the child for keys below `key(0)`.
#[inline]
pub fn leftmost(page: &[u8]) -> u32 {
    get_u32(page, OFF_LEFTMOST)
}

#[inline]
pub fn set_leftmost(page: &mut [u8], child: u32) {
    put_u32(page, OFF_LEFTMOST, child);
}

/// Left sibling page number ([`NIL`] if none).
#[inline]
pub fn prev(page: &[u8]) -> u32 {
    get_u32(page, OFF_PREV)
}

/// Right sibling page number ([`NIL`] if none).
#[inline]
pub fn next(page: &[u8]) -> u32 {
    get_u32(page, OFF_NEXT)
}

#[inline]
pub fn set_prev(page: &mut [u8], p: u32) {
    put_u32(page, OFF_PREV, p);
}

#[inline]
pub fn set_next(page: &mut [u8], p: u32) {
    put_u32(page, OFF_NEXT, p);
}

// ---------------------------------------------------------------------------
// Cells
// ---------------------------------------------------------------------------

/// End of the slot array for `n` cells.
#[inline]
fn slots_end(n: usize) -> usize {
    NODE_HEADER_END + SLOT * n
}

/// Offset of cell `i`'s body.
#[inline]
fn slot(page: &[u8], i: usize) -> usize {
    get_u16(page, NODE_HEADER_END + SLOT * i) as usize
}

#[inline]
fn set_slot(page: &mut [u8], i: usize, off: usize) {
    put_u16(page, NODE_HEADER_END + SLOT * i, off as u16);
}

/// Size of the cell body at `off` (header + key + value, no slot).
#[inline]
fn body_len_at(page: &[u8], off: usize) -> usize {
    CELL_HEADER + get_u16(page, off) as usize + get_u16(page, off + 2) as usize
}

/// Key of cell `i` (`i < count`).
#[inline]
pub fn key(page: &[u8], i: usize) -> &[u8] {
    debug_assert!(i < count(page), "key({i}) of {}", count(page));
    let off = slot(page, i);
    let klen = get_u16(page, off) as usize;
    &page[off + CELL_HEADER..off + CELL_HEADER + klen]
}

/// Value of cell `i` (`i < count`).
#[inline]
pub fn value(page: &[u8], i: usize) -> &[u8] {
    debug_assert!(i < count(page), "value({i}) of {}", count(page));
    let off = slot(page, i);
    let klen = get_u16(page, off) as usize;
    let vlen = get_u16(page, off + 2) as usize;
    let start = off + CELL_HEADER + klen;
    &page[start..start + vlen]
}

/// Internal nodes: the child page number stored as cell `i`'s value.
#[inline]
pub fn child(page: &[u8], i: usize) -> u32 {
    let v = value(page, i);
    debug_assert_eq!(v.len(), 4, "internal cell value must be a page number");
    get_u32(v, 0)
}

/// Binary search: `Ok(i)` if `key(i) == key`, else `Err(i)` with the
/// insertion position.
#[inline]
pub fn search(page: &[u8], key: &[u8]) -> Result<usize, usize> {
    let mut lo = 0usize;
    let mut hi = count(page);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let off = get_u16(page, NODE_HEADER_END + SLOT * mid) as usize;
        let klen = get_u16(page, off) as usize;
        let k = &page[off + CELL_HEADER..off + CELL_HEADER + klen];
        match k.cmp(key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// Internal nodes: the child to descend into for `key` and where it came
/// from: `None` for the leftmost child (key < key(0)), `Some(i)` for cell
/// `i`, the last cell with `key(i) <= key`.
#[inline]
pub fn route(page: &[u8], key: &[u8]) -> (u32, Option<usize>) {
    match search(page, key) {
        Ok(i) => (child(page, i), Some(i)),
        Err(0) => (leftmost(page), None),
        Err(i) => (child(page, i - 1), Some(i - 1)),
    }
}

// ---------------------------------------------------------------------------
// Space accounting
// ---------------------------------------------------------------------------

/// Space one cell takes in a node, including its slot.
#[inline]
pub const fn cell_bytes(key_len: usize, val_len: usize) -> usize {
    SLOT + CELL_HEADER + key_len + val_len
}

/// Bytes a node of `page_size` can give to cells and slots.
#[inline]
pub const fn capacity(page_size: usize) -> usize {
    page_size - NODE_HEADER_END
}

/// The contiguous gap between slot array and heap.
#[inline]
fn gap(page: &[u8]) -> usize {
    heap_top(page) - slots_end(count(page))
}

/// Total free bytes (contiguous gap + garbage) for new cells incl. slots.
#[inline]
pub fn free_bytes(page: &[u8]) -> usize {
    gap(page) + garbage(page)
}

/// Bytes used by live cells and their slots.
#[inline]
pub fn used_bytes(page: &[u8]) -> usize {
    capacity(page.len()) - free_bytes(page)
}

/// Largest `key.len() + value.len()` of one cell such that any node holds
/// at least 4 cells. With 4 cells of at most `capacity / 4` bytes each, a
/// full node plus one new cell can always be split into two halves that fit
/// (see [`split_point`]). 4 KiB: 1005, 16 KiB: 4077, 64 KiB: 16365.
#[inline]
pub const fn max_cell_payload(page_size: usize) -> usize {
    capacity(page_size) / 4 - SLOT - CELL_HEADER
}

// ---------------------------------------------------------------------------
// Mutation
// ---------------------------------------------------------------------------

/// Rewrites the heap: live cells contiguous at the end of the page in slot
/// order (cell 0 highest), garbage 0, released space zeroed. If `edit` is
/// `Some((i, v))`, cell `i` is written with value `v` instead of its own.
/// The caller guarantees the result fits (slot array end <= new heap_top).
fn rebuild(page: &mut [u8], edit: Option<(usize, &[u8])>) {
    let ps = page.len();
    let n = count(page);
    let old_top = heap_top(page);
    let old = page[old_top..].to_vec();
    let mut top = ps;
    for i in 0..n {
        let rel = slot(page, i) - old_top;
        let klen = get_u16(&old, rel) as usize;
        let vlen = get_u16(&old, rel + 2) as usize;
        let key = &old[rel + CELL_HEADER..rel + CELL_HEADER + klen];
        let val = match edit {
            Some((j, v)) if j == i => v,
            _ => &old[rel + CELL_HEADER + klen..rel + CELL_HEADER + klen + vlen],
        };
        top -= CELL_HEADER + klen + val.len();
        write_cell(page, top, key, val);
        set_slot(page, i, top);
    }
    debug_assert!(top >= slots_end(n), "rebuild overflows into slots");
    if top > old_top {
        page[old_top..top].fill(0);
    }
    set_heap_top(page, top);
    set_garbage(page, 0);
}

#[inline]
fn write_cell(page: &mut [u8], off: usize, key: &[u8], val: &[u8]) {
    put_u16(page, off, key.len() as u16);
    put_u16(page, off + 2, val.len() as u16);
    let k = off + CELL_HEADER;
    page[k..k + key.len()].copy_from_slice(key);
    page[k + key.len()..k + key.len() + val.len()].copy_from_slice(val);
}

/// Rewrites the heap so cells are contiguous at the end and garbage is 0.
/// Deterministic; a no-op on an already compact node.
pub fn compact(page: &mut [u8]) {
    if garbage(page) == 0 {
        return;
    }
    rebuild(page, None);
}

/// Inserts a cell at position `i` (`0..=count`). The caller picks `i` (from
/// [`search`]) so keys stay sorted. Returns false, leaving the page
/// unchanged, if `key.len() + val.len() > max_cell_payload` or the cell does
/// not fit even after compaction. Compacts first when the contiguous gap is
/// too small but [`free_bytes`] suffices.
pub fn insert(page: &mut [u8], i: usize, key: &[u8], val: &[u8]) -> bool {
    let n = count(page);
    debug_assert!(i <= n, "insert at {i} of {n}");
    debug_assert!(
        is_leaf(page) || val.len() == 4,
        "internal value not 4 bytes"
    );
    if key.len() + val.len() > max_cell_payload(page.len()) {
        return false;
    }
    let need = cell_bytes(key.len(), val.len());
    if need > free_bytes(page) {
        return false;
    }
    if need > gap(page) {
        rebuild(page, None);
    }
    let body = need - SLOT;
    let off = heap_top(page) - body;
    write_cell(page, off, key, val);
    set_heap_top(page, off);
    let at = NODE_HEADER_END + SLOT * i;
    page.copy_within(at..slots_end(n), at + SLOT);
    put_u16(page, at, off as u16);
    set_count(page, n + 1);
    true
}

/// Replaces the value of cell `i`, keeping its key. Same length: in place.
/// Shorter: in place, the tail becomes garbage. Longer: a new cell body is
/// written (compacting if needed) and the old one becomes garbage. Returns
/// false, leaving the page unchanged, if the new cell would exceed
/// [`max_cell_payload`] or does not fit.
pub fn set_value(page: &mut [u8], i: usize, val: &[u8]) -> bool {
    debug_assert!(i < count(page), "set_value({i}) of {}", count(page));
    debug_assert!(
        is_leaf(page) || val.len() == 4,
        "internal value not 4 bytes"
    );
    let off = slot(page, i);
    let klen = get_u16(page, off) as usize;
    let old_vlen = get_u16(page, off + 2) as usize;
    if klen + val.len() > max_cell_payload(page.len()) {
        return false;
    }
    let vstart = off + CELL_HEADER + klen;
    if val.len() <= old_vlen {
        page[vstart..vstart + val.len()].copy_from_slice(val);
        put_u16(page, off + 2, val.len() as u16);
        let freed = old_vlen - val.len();
        if freed > 0 {
            set_garbage(page, garbage(page) + freed);
        }
        return true;
    }
    let old_body = CELL_HEADER + klen + old_vlen;
    let new_body = CELL_HEADER + klen + val.len();
    if new_body > free_bytes(page) + old_body {
        return false;
    }
    if new_body <= gap(page) {
        let new_off = heap_top(page) - new_body;
        put_u16(page, new_off, klen as u16);
        put_u16(page, new_off + 2, val.len() as u16);
        page.copy_within(off + CELL_HEADER..vstart, new_off + CELL_HEADER);
        let nv = new_off + CELL_HEADER + klen;
        page[nv..nv + val.len()].copy_from_slice(val);
        set_heap_top(page, new_off);
        set_slot(page, i, new_off);
        set_garbage(page, garbage(page) + old_body);
    } else {
        rebuild(page, Some((i, val)));
    }
    true
}

/// Removes cell `i`. Its body becomes garbage, except when it is the lowest
/// cell of the heap: then the heap just shrinks. Removing the last cell
/// resets the node to an empty heap.
pub fn remove(page: &mut [u8], i: usize) {
    let n = count(page);
    debug_assert!(i < n, "remove({i}) of {n}");
    let off = slot(page, i);
    let body = body_len_at(page, off);
    let at = NODE_HEADER_END + SLOT * i;
    page.copy_within(at + SLOT..slots_end(n), at);
    let end = slots_end(n);
    page[end - SLOT..end].fill(0);
    set_count(page, n - 1);
    let top = heap_top(page);
    if n == 1 {
        page[top..].fill(0);
        set_heap_top(page, page.len());
        set_garbage(page, 0);
    } else if off == top {
        page[off..off + body].fill(0);
        set_heap_top(page, off + body);
    } else {
        set_garbage(page, garbage(page) + body);
    }
}

/// Picks where to split a full node that must take a new cell of
/// `new_cell` bytes (as from [`cell_bytes`]) at position `pos`.
///
/// Returns `s`: cells `[0, s)` stay, cells `[s, count)` move to the new
/// right node ([`move_tail`]`(src, dst, s)`). The new cell goes to the left
/// node at `pos` if `pos < s`, else to the right node at `pos - s`.
///
/// * **Appending** (`pos == count`): returns `count`, so the left node keeps
///   everything and the right node starts with just the new cell. Under
///   sequential (ascending) inserts this leaves full left nodes instead of
///   half-empty ones, like InnoDB's sequential-insert heuristic. The price
///   is that a random insert which happens to land at the end of a node
///   also leaves a full left node behind (it will split again sooner).
/// * **Otherwise** `s` is in `1..count` and minimises the byte difference
///   between the halves, counting slots and the new cell on its side. Since
///   no cell exceeds a quarter of the capacity ([`max_cell_payload`]), both
///   halves then fit with the new cell where it lands.
///
/// Needs `count >= 2` unless appending (guaranteed when an insert failed,
/// since any node holds 4 maximal cells); a 0-cell node returns 0.
pub fn split_point(page: &[u8], pos: usize, new_cell: usize) -> usize {
    let n = count(page);
    if n == 0 {
        return 0;
    }
    if pos >= n {
        return n;
    }
    let mut total = new_cell;
    for i in 0..n {
        total += SLOT + body_len_at(page, slot(page, i));
    }
    let mut best = 1usize;
    let mut best_diff = usize::MAX;
    let mut prefix = 0usize;
    for s in 1..n {
        prefix += SLOT + body_len_at(page, slot(page, s - 1));
        let left = prefix + if pos < s { new_cell } else { 0 };
        let right = total - left;
        let diff = left.abs_diff(right);
        if diff < best_diff {
            best_diff = diff;
            best = s;
        }
        if left >= right {
            // Left only grows from here: the difference cannot shrink again.
            break;
        }
    }
    best
}

/// Moves cells `[from, count)` of `src` to the end of `dst` (normally an
/// empty node just made by [`init`] at the same level), in order, then
/// removes them from `src` and compacts `src`.
///
/// Panics if `dst` cannot hold them (a caller bug: an empty node of the
/// same page size always can).
pub fn move_tail(src: &mut [u8], dst: &mut [u8], from: usize) {
    let n = count(src);
    assert!(from <= n, "move_tail from {from} of {n}");
    debug_assert_eq!(level(src), level(dst), "move_tail across levels");
    let mut need = 0usize;
    for i in from..n {
        need += SLOT + body_len_at(src, slot(src, i));
    }
    assert!(
        need <= free_bytes(dst),
        "move_tail: destination has {} free bytes, needs {need}",
        free_bytes(dst)
    );
    if need > gap(dst) {
        rebuild(dst, None);
    }
    let mut dn = count(dst);
    debug_assert!(
        dn == 0 || from == n || key(dst, dn - 1) < key(src, from),
        "move_tail would break key order"
    );
    let mut top = heap_top(dst);
    for i in from..n {
        let off = slot(src, i);
        let body = body_len_at(src, off);
        top -= body;
        dst[top..top + body].copy_from_slice(&src[off..off + body]);
        set_slot(dst, dn, top);
        dn += 1;
    }
    set_heap_top(dst, top);
    set_count(dst, dn);

    src[slots_end(from)..slots_end(n)].fill(0);
    set_count(src, from);
    rebuild(src, None);
}

/// Removes cells `[0, n)` and compacts.
pub fn truncate_front(page: &mut [u8], n: usize) {
    let total = count(page);
    assert!(n <= total, "truncate_front {n} of {total}");
    if n == 0 {
        return;
    }
    page.copy_within(slots_end(n)..slots_end(total), NODE_HEADER_END);
    page[slots_end(total - n)..slots_end(total)].fill(0);
    set_count(page, total - n);
    rebuild(page, None);
}

/// For redo logging of a whole node: `(head_len, heap_top)`. The page is
/// fully described by `page[..head_len]` (file header, node header, slots)
/// and `page[heap_top..]` (the heap); everything between is zero
/// (invariant 7), so copying both parts onto a zeroed buffer reproduces the
/// page byte for byte. Call [`compact`] first to keep garbage out of the
/// image.
pub fn image_extent(page: &[u8]) -> (usize, usize) {
    (slots_end(count(page)), heap_top(page))
}

// ---------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------

/// Structural self-check (invariants 1–7 of the module doc). Never panics,
/// whatever the bytes. `Err` says what is wrong.
pub fn check(page: &[u8]) -> Result<(), String> {
    let ps = page.len();
    if !(MIN_PAGE..=MAX_PAGE).contains(&ps) {
        return Err(format!("page size {ps} out of range"));
    }
    let ty = page_type_raw(page);
    if ty != PageType::Index as u16 {
        return Err(format!("page type {ty} is not an index page"));
    }
    let lvl = level(page);
    if lvl >= MAX_LEVEL {
        return Err(format!("level {lvl} out of range"));
    }
    let n = count(page);
    let top = heap_top(page);
    let send = slots_end(n);
    if top > ps {
        return Err(format!("heap_top {top} beyond page size {ps}"));
    }
    if send > top {
        return Err(format!(
            "slot array of {n} cells ends at {send}, past heap_top {top}"
        ));
    }
    let garb = garbage(page);
    if garb > ps - top {
        return Err(format!("garbage {garb} exceeds heap size {}", ps - top));
    }
    if let Some(p) = page[send..top].iter().position(|&b| b != 0) {
        return Err(format!("free gap not zero at offset {}", send + p));
    }
    let leaf = lvl == 0;
    let lm = leftmost(page);
    if leaf && lm != NIL {
        return Err(format!("leaf has leftmost child {lm}"));
    }

    let mut extents: Vec<(usize, usize, usize)> = Vec::with_capacity(n);
    let mut live = 0usize;
    for i in 0..n {
        let off = slot(page, i);
        if off < top || off + CELL_HEADER > ps {
            return Err(format!("cell {i} at {off} outside heap [{top}, {ps})"));
        }
        let end = off + body_len_at(page, off);
        if end > ps {
            return Err(format!("cell {i} at {off} runs past page end ({end})"));
        }
        live += end - off;
        extents.push((off, end, i));
        if !leaf {
            let vlen = get_u16(page, off + 2);
            if vlen != 4 {
                return Err(format!("internal cell {i} has {vlen}-byte value"));
            }
            if child(page, i) == NIL {
                return Err(format!("internal cell {i} has NIL child"));
            }
        }
        if i > 0 && key(page, i - 1) >= key(page, i) {
            return Err(format!("keys not increasing at cell {i}"));
        }
    }
    extents.sort_unstable();
    for w in extents.windows(2) {
        if w[0].1 > w[1].0 {
            return Err(format!("cells {} and {} overlap", w[0].2, w[1].2));
        }
    }
    if live + garb != ps - top {
        return Err(format!(
            "accounting: live {live} + garbage {garb} != heap size {}",
            ps - top
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{init_header, page_id, PageId};
    use std::collections::BTreeMap;

    /// xorshift64*: small, deterministic, good enough for tests.
    struct Rng(u64);
    impl Rng {
        fn new(seed: u64) -> Self {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        /// Random bytes, length `min + below(spread)`.
        fn rbytes(&mut self, min: usize, spread: usize, alphabet: u8) -> Vec<u8> {
            let len = min + self.below(spread);
            self.bytes(len, alphabet)
        }
        fn bytes(&mut self, len: usize, alphabet: u8) -> Vec<u8> {
            (0..len)
                .map(|_| b'a' + (self.next() % alphabet as u64) as u8)
                .collect()
        }
    }

    fn new_page(ps: usize, level: u16) -> Vec<u8> {
        let mut p = vec![0xAAu8; ps];
        init_header(&mut p, PageId::new(3, 9), PageType::Free);
        init(&mut p, level, 77);
        p
    }

    fn contents(p: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..count(p))
            .map(|i| (key(p, i).to_vec(), value(p, i).to_vec()))
            .collect()
    }

    fn append(p: &mut [u8], k: &[u8], v: &[u8]) -> bool {
        let n = count(p);
        insert(p, n, k, v)
    }

    fn put(p: &mut [u8], k: &[u8], v: &[u8]) -> bool {
        match search(p, k) {
            Ok(i) => set_value(p, i, v),
            Err(i) => insert(p, i, k, v),
        }
    }

    #[test]
    fn layout_constants() {
        assert_eq!(NODE_HEADER_END, 52);
        assert_eq!(cell_bytes(3, 5), 14);
        assert_eq!(max_cell_payload(4096), 1005);
        assert_eq!(max_cell_payload(16384), 4077);
        assert_eq!(max_cell_payload(65536), 16365);
        for ps in crate::page::PAGE_SIZES {
            assert!(4 * cell_bytes(max_cell_payload(ps), 0) <= capacity(ps));
            assert!(5 * cell_bytes(max_cell_payload(ps) + 1, 0) > capacity(ps));
        }
    }

    #[test]
    fn init_sets_header() {
        let p = new_page(4096, 2);
        assert_eq!(page_id(&p), PageId::new(3, 9));
        assert_eq!(page_type_raw(&p), PageType::Index as u16);
        assert_eq!(level(&p), 2);
        assert!(!is_leaf(&p));
        assert_eq!(index_id(&p), 77);
        assert_eq!(count(&p), 0);
        assert_eq!((prev(&p), next(&p), leftmost(&p)), (NIL, NIL, NIL));
        assert_eq!(free_bytes(&p), 4096 - NODE_HEADER_END);
        assert_eq!(used_bytes(&p), 0);
        assert!(p[NODE_HEADER_END..].iter().all(|&b| b == 0));
        check(&p).unwrap(); // leftmost may still be NIL right after init
        let l = new_page(4096, 0);
        assert!(check(&l).is_ok());
        assert!(is_leaf(&l));
    }

    #[test]
    fn siblings_and_leftmost() {
        let mut p = new_page(4096, 0);
        set_prev(&mut p, 5);
        set_next(&mut p, 6);
        assert_eq!((prev(&p), next(&p)), (5, 6));
        let mut q = new_page(4096, 1);
        set_leftmost(&mut q, 42);
        assert_eq!(leftmost(&q), 42);
        check(&q).unwrap();
    }

    #[test]
    fn insert_search_remove_basics() {
        let mut p = new_page(4096, 0);
        assert_eq!(search(&p, b"m"), Err(0));
        for k in [&b"m"[..], b"c", b"x", b"a", b"q"] {
            let i = search(&p, k).unwrap_err();
            assert!(insert(&mut p, i, k, &[k[0]; 3]));
            check(&p).unwrap();
        }
        let keys: Vec<&[u8]> = (0..count(&p)).map(|i| key(&p, i)).collect();
        assert_eq!(keys, [&b"a"[..], b"c", b"m", b"q", b"x"]);
        assert_eq!(search(&p, b"m"), Ok(2));
        assert_eq!(search(&p, b"n"), Err(3));
        assert_eq!(search(&p, b""), Err(0));
        assert_eq!(search(&p, b"z"), Err(5));
        assert_eq!(value(&p, 3), b"qqq");
        assert_eq!(used_bytes(&p), 5 * cell_bytes(1, 3));

        remove(&mut p, 2); // "m", not at heap top: garbage
        check(&p).unwrap();
        assert_eq!(garbage(&p), 8);
        assert_eq!(search(&p, b"m"), Err(2));
        assert_eq!(used_bytes(&p), 4 * cell_bytes(1, 3));
        // "q" was inserted last, so it is the lowest cell: heap shrinks.
        let i = search(&p, b"q").unwrap();
        remove(&mut p, i);
        check(&p).unwrap();
        assert_eq!(garbage(&p), 8);
        compact(&mut p);
        check(&p).unwrap();
        assert_eq!(garbage(&p), 0);
        assert_eq!(heap_top(&p), 4096 - 3 * 8);
        let keys: Vec<&[u8]> = (0..count(&p)).map(|i| key(&p, i)).collect();
        assert_eq!(keys, [&b"a"[..], b"c", b"x"]);
        for _ in 0..3 {
            remove(&mut p, 0);
            check(&p).unwrap();
        }
        assert_eq!(p, new_page(4096, 0), "empty node is pristine again");
    }

    #[test]
    fn empty_keys_and_values() {
        let mut p = new_page(4096, 0);
        assert!(insert(&mut p, 0, b"", b""));
        assert!(insert(&mut p, 1, b"k", b""));
        check(&p).unwrap();
        assert_eq!(key(&p, 0), b"");
        assert_eq!(value(&p, 1), b"");
        assert_eq!(search(&p, b""), Ok(0));
    }

    #[test]
    fn fill_until_full_then_compaction_reuses_garbage() {
        let mut p = new_page(4096, 0);
        let mut n = 0u32;
        while append(&mut p, &n.to_be_bytes(), &[7u8; 20]) {
            n += 1;
        }
        check(&p).unwrap();
        assert_eq!(n as usize, capacity(4096) / cell_bytes(4, 20));
        assert!(free_bytes(&p) < cell_bytes(4, 20));
        // Remove every other cell: the space is garbage, not gap.
        let mut i = 1;
        while i < count(&p) {
            remove(&mut p, i);
            i += 1;
        }
        check(&p).unwrap();
        // Freed slots widen the gap a little; ask for more than the gap.
        let vlen = gap(&p);
        assert!(cell_bytes(4, vlen) <= free_bytes(&p));
        let before = count(&p);
        let k = 1u32.to_be_bytes();
        let pos = search(&p, &k).unwrap_err();
        let v = vec![9u8; vlen];
        assert!(insert(&mut p, pos, &k, &v), "compacts to fit");
        check(&p).unwrap();
        assert_eq!(garbage(&p), 0);
        assert_eq!(count(&p), before + 1);
        assert_eq!(value(&p, pos), &v[..]);
    }

    #[test]
    fn failed_insert_leaves_page_unchanged() {
        let mut p = new_page(4096, 0);
        let mut n = 0u32;
        while append(&mut p, &n.to_be_bytes(), &[1u8; 100]) {
            n += 1;
        }
        remove(&mut p, 3); // create garbage
        let snap = p.clone();
        assert!(!insert(&mut p, 0, b"\0", &[2u8; 300]));
        assert_eq!(p, snap);
        assert!(!set_value(&mut p, 0, &[2u8; 400]));
        assert_eq!(p, snap);
    }

    #[test]
    fn oversize_entries_rejected() {
        for ps in crate::page::PAGE_SIZES {
            let max = max_cell_payload(ps);
            let mut p = new_page(ps, 0);
            assert!(!insert(&mut p, 0, &[1u8; 10], &vec![0u8; max - 9]));
            assert_eq!(count(&p), 0);
            assert!(insert(&mut p, 0, &[1u8; 10], &vec![0u8; max - 10]));
            assert!(!set_value(&mut p, 0, &vec![0u8; max - 9]));
            // Four maximal cells always fit.
            for b in 2..=4u8 {
                assert!(append(&mut p, &[b; 10], &vec![0u8; max - 10]));
            }
            check(&p).unwrap();
        }
    }

    #[test]
    fn set_value_paths() {
        let mut p = new_page(4096, 0);
        for k in 0..12u8 {
            assert!(insert(&mut p, k as usize, &[k], &[k; 250]));
        }
        // same length: in place
        let top = heap_top(&p);
        assert!(set_value(&mut p, 4, &[b'a'; 250]));
        assert_eq!(heap_top(&p), top);
        assert_eq!(value(&p, 4), [b'a'; 250]);
        // shorter: in place, the tail becomes garbage
        assert!(set_value(&mut p, 5, b"xy"));
        check(&p).unwrap();
        assert_eq!(garbage(&p), 248);
        assert_eq!(heap_top(&p), top);
        assert_eq!(value(&p, 5), b"xy");
        // longer, fits in the gap: new body, old one is garbage
        assert!(set_value(&mut p, 6, &[b'b'; 300]));
        check(&p).unwrap();
        assert_eq!(value(&p, 6), [b'b'; 300]);
        assert_eq!(heap_top(&p), top - 305);
        assert_eq!(garbage(&p), 248 + 255);
        // longer, fits only after compaction
        let v = vec![b'c'; 800];
        assert!(gap(&p) < 805 && 805 <= free_bytes(&p) + 305);
        assert!(set_value(&mut p, 7, &v));
        check(&p).unwrap();
        assert_eq!(garbage(&p), 0);
        assert_eq!(value(&p, 7), &v[..]);
        assert_eq!(value(&p, 6), [b'b'; 300]);
        for k in 0..12u8 {
            assert_eq!(key(&p, k as usize), [k]);
        }
    }

    #[test]
    fn exact_fills() {
        // set_value consuming every free byte (through compaction)
        let mut p = new_page(4096, 0);
        for k in 0..5u8 {
            assert!(insert(&mut p, k as usize, &[k], &[k; 790]));
        }
        let free = free_bytes(&p);
        assert_eq!(free, capacity(4096) - 5 * cell_bytes(1, 790));
        assert!(!set_value(&mut p, 2, &vec![9u8; 790 + free + 1]));
        assert!(set_value(&mut p, 2, &vec![9u8; 790 + free]));
        check(&p).unwrap();
        assert_eq!(free_bytes(&p), 0);
        assert_eq!(gap(&p), 0);
        // insert consuming every free byte
        let mut p = new_page(4096, 0);
        for k in 0..5u8 {
            assert!(insert(&mut p, k as usize, &[k], &[k; 800]));
        }
        remove(&mut p, 1); // garbage
        let free = free_bytes(&p);
        assert!(!insert(&mut p, 1, &[1], &vec![1u8; free - 6]));
        assert!(insert(&mut p, 1, &[1], &vec![1u8; free - 7]));
        check(&p).unwrap();
        assert_eq!(free_bytes(&p), 0);
    }

    #[test]
    fn route_on_internal_nodes() {
        let mut p = new_page(4096, 1);
        set_leftmost(&mut p, 100);
        assert_eq!(route(&p, b"anything"), (100, None));
        for (i, k) in [&b"d"[..], b"h", b"p"].iter().enumerate() {
            assert!(insert(&mut p, i, k, &(200 + i as u32).to_le_bytes()));
        }
        check(&p).unwrap();
        assert_eq!(child(&p, 1), 201);
        assert_eq!(route(&p, b""), (100, None));
        assert_eq!(route(&p, b"c"), (100, None));
        assert_eq!(route(&p, b"czzz"), (100, None));
        assert_eq!(route(&p, b"d"), (200, Some(0)));
        assert_eq!(route(&p, b"d\0"), (200, Some(0)));
        assert_eq!(route(&p, b"g"), (200, Some(0)));
        assert_eq!(route(&p, b"h"), (201, Some(1)));
        assert_eq!(route(&p, b"o"), (201, Some(1)));
        assert_eq!(route(&p, b"p"), (202, Some(2)));
        assert_eq!(route(&p, b"zzz"), (202, Some(2)));
    }

    #[test]
    fn check_detects_corruption() {
        let mut p = new_page(4096, 0);
        for k in 0..5u8 {
            assert!(insert(&mut p, k as usize, &[k * 2], b"vvvv"));
        }
        check(&p).unwrap();

        let mut q = p.clone();
        put_u16(&mut q, OFF_TYPE, PageType::Free as u16);
        assert!(check(&q).unwrap_err().contains("type"));

        let mut q = p.clone();
        let (a, b) = (slot(&q, 1), slot(&q, 2));
        set_slot(&mut q, 1, b);
        set_slot(&mut q, 2, a);
        assert!(check(&q).unwrap_err().contains("increasing"));

        let mut q = p.clone();
        let s = slot(&q, 0);
        set_slot(&mut q, 1, s);
        assert!(check(&q).is_err());

        let mut q = p.clone();
        let bad = heap_top(&q) - 1;
        set_slot(&mut q, 0, bad);
        assert!(check(&q).unwrap_err().contains("outside heap"));

        let mut q = p.clone();
        set_garbage(&mut q, 1);
        assert!(check(&q).unwrap_err().contains("accounting"));

        let mut q = p.clone();
        set_count(&mut q, 2000);
        assert!(check(&q).unwrap_err().contains("slot array"));

        let mut q = p.clone();
        let off = slot(&q, 4);
        put_u16(&mut q, off, 5000); // key_len runs past the page
        assert!(check(&q).is_err());

        let mut q = p.clone();
        let off = slot(&q, 0);
        put_u16(&mut q, off + 2, 5); // grows into the next cell
        assert!(check(&q).is_err());

        let mut q = p.clone();
        q[NODE_HEADER_END + 20] = 1;
        assert!(check(&q).unwrap_err().contains("gap"));

        let mut q = p.clone();
        set_leftmost(&mut q, 3);
        assert!(check(&q).unwrap_err().contains("leaf has leftmost"));

        // Internal nodes: values must be 4-byte, non-NIL child numbers.
        let mut q = new_page(4096, 1);
        assert!(insert(&mut q, 0, b"a", &7u32.to_le_bytes()));
        assert!(insert(&mut q, 1, b"b", &NIL.to_le_bytes()));
        assert!(check(&q).unwrap_err().contains("NIL child"));
        let mut q = p.clone();
        put_u16(&mut q, OFF_LEVEL, 1);
        check(&q).unwrap(); // "vvvv" reads as a child number
        let off = slot(&q, 2);
        put_u16(&mut q, off + 2, 3); // val_len 3
        assert!(check(&q).unwrap_err().contains("3-byte value"));
        let q = new_page(4096, MAX_LEVEL);
        assert!(check(&q).unwrap_err().contains("level"));

        let mut q = p.clone();
        set_heap_top(&mut q, 5000);
        assert!(check(&q).is_err());

        // A truncated buffer is reported, not a panic.
        let _ = check(&p[..4000]);
        assert!(check(&p[..100]).is_err());
    }

    #[test]
    fn check_never_panics_on_garbage() {
        let mut rng = Rng::new(99);
        for _ in 0..2000 {
            let mut p = new_page(4096, 0);
            for k in 0..8u8 {
                insert(&mut p, k as usize, &[k; 3], &[k; 5]);
            }
            for _ in 0..1 + rng.below(4) {
                let at = FIL_HEADER_BYTES + rng.below(4096 - FIL_HEADER_BYTES);
                p[at] = rng.next() as u8;
            }
            let _ = check(&p);
        }
    }

    /// How often the interesting paths ran in a model run.
    #[derive(Default, Debug)]
    struct Coverage {
        rejected: usize,
        compacting_inserts: usize,
        compacting_set_values: usize,
        full: usize,
    }

    /// Runs random ops against a BTreeMap model; checks after every op.
    fn model_run(ps: usize, seed: u64, ops: usize, cov: &mut Coverage) {
        let mut rng = Rng::new(seed);
        let mut p = new_page(ps, 0);
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let max = max_cell_payload(ps);
        for step in 0..ops {
            let r = rng.below(100);
            let big = rng.below(20) == 0;
            if r < 50 || model.is_empty() {
                let klen = 1 + rng.below(if big { 200 } else { 12 });
                let k = rng.bytes(klen, 4);
                let vlen = rng.below(if big { max } else { 40 });
                let v = rng.bytes(vlen, 26);
                let snap = p.clone();
                let fits = klen + vlen <= max;
                match search(&p, &k) {
                    Ok(i) => {
                        let ok = set_value(&mut p, i, &v);
                        let old = value(&snap, i).len();
                        let avail = free_bytes(&snap) + old;
                        if ok && vlen > old && 4 + klen + vlen > gap(&snap) {
                            cov.compacting_set_values += 1;
                        }
                        assert_eq!(ok, fits && (vlen <= old || vlen <= avail), "step {step}");
                        if ok {
                            model.insert(k, v);
                        } else {
                            if fits {
                                cov.rejected += 1; // for lack of space
                            }
                            assert_eq!(p, snap);
                        }
                    }
                    Err(i) => {
                        assert!(!model.contains_key(&k));
                        let ok = insert(&mut p, i, &k, &v);
                        let room = cell_bytes(klen, vlen) <= free_bytes(&snap);
                        assert_eq!(ok, fits && room, "step {step}");
                        if ok && cell_bytes(klen, vlen) > gap(&snap) {
                            cov.compacting_inserts += 1;
                        }
                        if ok {
                            model.insert(k, v);
                        } else {
                            if fits {
                                cov.rejected += 1; // for lack of space
                            }
                            assert_eq!(p, snap);
                        }
                    }
                }
            } else if r < 85 {
                let i = rng.below(count(&p));
                let k = key(&p, i).to_vec();
                remove(&mut p, i);
                assert!(model.remove(&k).is_some());
            } else if r < 97 {
                let i = rng.below(count(&p));
                let k = key(&p, i).to_vec();
                let v = rng.rbytes(0, 60, 26);
                let snap = p.clone();
                if set_value(&mut p, i, &v) {
                    model.insert(k, v);
                } else {
                    assert_eq!(p, snap);
                }
            } else {
                compact(&mut p);
                assert_eq!(garbage(&p), 0);
            }
            if let Err(e) = check(&p) {
                panic!("step {step}: {e}");
            }
            if free_bytes(&p) < 100 {
                cov.full += 1;
            }
            assert_eq!(
                used_bytes(&p),
                model
                    .iter()
                    .map(|(k, v)| cell_bytes(k.len(), v.len()))
                    .sum::<usize>()
            );
            if step % 7 == 0 || step + 1 == ops {
                let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                assert_eq!(contents(&p), want, "step {step}");
                for (k, _) in model.iter().take(5) {
                    assert!(search(&p, k).is_ok());
                }
            }
        }
    }

    fn assert_covered(cov: &Coverage) {
        assert!(cov.rejected > 10, "{cov:?}");
        assert!(cov.compacting_inserts > 10, "{cov:?}");
        assert!(cov.compacting_set_values > 3, "{cov:?}");
        assert!(cov.full > 100, "{cov:?}");
    }

    #[test]
    fn model_4k() {
        let mut cov = Coverage::default();
        for seed in 0..8 {
            model_run(4096, seed, 4000, &mut cov);
        }
        assert_covered(&cov);
    }

    #[test]
    fn model_16k() {
        let mut cov = Coverage::default();
        for seed in 100..104 {
            model_run(16384, seed, 6000, &mut cov);
        }
        assert_covered(&cov);
    }

    #[test]
    fn model_64k() {
        let mut cov = Coverage::default();
        model_run(65536, 7, 8000, &mut cov);
        assert!(cov.compacting_inserts > 0, "{cov:?}");
    }

    /// Applies a seeded op sequence; used twice to compare bytes.
    fn replay(ps: usize, seed: u64) -> Vec<u8> {
        let mut rng = Rng::new(seed);
        let mut p = new_page(ps, 0);
        for _ in 0..3000 {
            let r = rng.below(10);
            if r < 5 || count(&p) == 0 {
                let k = rng.rbytes(1, 10, 5);
                let v = rng.rbytes(0, 50, 26);
                put(&mut p, &k, &v);
            } else if r < 8 {
                let i = rng.below(count(&p));
                remove(&mut p, i);
            } else {
                let i = rng.below(count(&p));
                let v = rng.rbytes(0, 80, 26);
                set_value(&mut p, i, &v);
            }
        }
        p
    }

    #[test]
    fn deterministic() {
        for seed in 0..4 {
            let a = replay(4096, seed);
            let b = replay(4096, seed);
            assert_eq!(a, b);
            check(&a).unwrap();
        }
    }

    #[test]
    fn image_extent_is_lossless() {
        for seed in 0..4 {
            let mut p = replay(8192, seed);
            for compacted in [false, true] {
                if compacted {
                    compact(&mut p);
                }
                let (head, top) = image_extent(&p);
                assert!(head <= top);
                let mut q = vec![0u8; p.len()];
                q[..head].copy_from_slice(&p[..head]);
                q[top..].copy_from_slice(&p[top..]);
                assert_eq!(q, p);
            }
        }
    }

    /// Fills a node until the new entry doesn't fit, splits, inserts, and
    /// checks the two halves concatenate to the original plus the new key.
    fn split_case(ps: usize, level: u16, seed: u64, append: bool) {
        let mut rng = Rng::new(seed);
        let mut src = new_page(ps, level);
        if level > 0 {
            set_leftmost(&mut src, 1);
        }
        let max = max_cell_payload(ps);
        let gen_val = |rng: &mut Rng| {
            if level > 0 {
                (rng.next() as u32 & 0xFFFF).to_le_bytes().to_vec()
            } else if rng.below(10) == 0 {
                rng.rbytes(0, max - 16, 26)
            } else {
                rng.rbytes(0, 60, 26)
            }
        };
        let mut seq = 0u32;
        let (nk, nv) = loop {
            let k = if append {
                seq += 1;
                let mut k = seq.to_be_bytes().to_vec();
                k.extend(rng.rbytes(0, 10, 26));
                k
            } else {
                rng.rbytes(4, 12, 26)
            };
            let v = gen_val(&mut rng);
            match search(&src, &k) {
                Ok(_) => continue,
                Err(i) => {
                    if !insert(&mut src, i, &k, &v) {
                        break (k, v);
                    }
                }
            }
            // sprinkle deletions so the heap has garbage
            if rng.below(8) == 0 && count(&src) > 2 {
                let i = rng.below(count(&src));
                remove(&mut src, i);
            }
        };
        check(&src).unwrap();
        let mut want = contents(&src);
        let pos = search(&src, &nk).unwrap_err();
        want.insert(pos, (nk.clone(), nv.clone()));
        let n = count(&src);
        let cb = cell_bytes(nk.len(), nv.len());
        let s = split_point(&src, pos, cb);
        if pos == n {
            assert_eq!(s, n, "sequential insert keeps the left node full");
        } else {
            assert!((1..n).contains(&s), "s {s} of {n}");
        }
        let mut dst = vec![0u8; ps];
        init_header(&mut dst, PageId::new(3, 10), PageType::Index);
        init(&mut dst, level, index_id(&src));
        move_tail(&mut src, &mut dst, s);
        if level > 0 {
            set_leftmost(&mut dst, 2);
        }
        check(&src).unwrap();
        check(&dst).unwrap();
        assert_eq!(garbage(&src), 0);
        assert!(count(&src) >= 1);
        if pos < s {
            assert!(insert(&mut src, pos, &nk, &nv), "left fits new cell");
        } else {
            assert!(insert(&mut dst, pos - s, &nk, &nv), "right fits new cell");
        }
        check(&src).unwrap();
        check(&dst).unwrap();
        assert!(count(&dst) >= 1);
        let mut got = contents(&src);
        got.extend(contents(&dst));
        assert_eq!(got, want);
        if pos < n {
            // Balanced: neither half is more than ~half + one big cell.
            let (l, r) = (used_bytes(&src), used_bytes(&dst));
            let slack = cell_bytes(max, 0) + cb;
            assert!(l.abs_diff(r) <= slack, "unbalanced {l} vs {r}");
        }
    }

    #[test]
    fn split_random_leaves() {
        for seed in 0..40 {
            split_case(4096, 0, seed, false);
            split_case(16384, 0, seed + 1000, false);
        }
    }

    #[test]
    fn split_internal() {
        for seed in 0..20 {
            split_case(4096, 1, seed, false);
        }
    }

    #[test]
    fn split_sequential() {
        for seed in 0..10 {
            split_case(4096, 0, seed, true);
            split_case(16384, 0, seed, true);
        }
    }

    #[test]
    fn split_point_small_cases() {
        let mut p = new_page(4096, 0);
        assert_eq!(split_point(&p, 0, 10), 0);
        for k in 0..4u8 {
            insert(&mut p, k as usize, &[k], &[0u8; 100]);
        }
        let cb = cell_bytes(1, 100);
        assert_eq!(split_point(&p, 4, cb), 4);
        // pos 0: s=1 gives {new,0}|{1,2,3} (212 vs 318), s=2 gives
        // {new,0,1}|{2,3} (318 vs 212): equal imbalance, the first wins.
        assert_eq!(split_point(&p, 0, cb), 1);
        assert_eq!(split_point(&p, 2, cb), 2);
        assert_eq!(split_point(&p, 3, cb), 2);
    }

    #[test]
    fn move_tail_appends_to_nonempty_dst_and_truncate_front() {
        let mut a = new_page(4096, 0);
        let mut b = new_page(4096, 0);
        for k in 0..10u8 {
            insert(&mut a, k as usize, &[k], &[k; 7]);
        }
        for k in 20..25u8 {
            insert(&mut b, (k - 20) as usize, &[k], &[k; 7]);
        }
        remove(&mut b, 0); // garbage in dst
                           // Merge: move all of b onto the end of a.
        move_tail(&mut b, &mut a, 0);
        check(&a).unwrap();
        check(&b).unwrap();
        assert_eq!(count(&b), 0);
        assert_eq!(count(&a), 14);
        assert_eq!(key(&a, 10), [21]);
        let mut b2 = new_page(4096, 0);
        assert_eq!(b, b2, "emptied node is pristine");
        // move nothing
        move_tail(&mut a, &mut b2, 14);
        assert_eq!(count(&a), 14);
        assert_eq!(count(&b2), 0);

        truncate_front(&mut a, 4);
        check(&a).unwrap();
        assert_eq!(count(&a), 10);
        assert_eq!(key(&a, 0), [4]);
        assert_eq!(garbage(&a), 0);
        assert_eq!(used_bytes(&a), 10 * cell_bytes(1, 7));
        truncate_front(&mut a, 0);
        assert_eq!(count(&a), 10);
        truncate_front(&mut a, 10);
        check(&a).unwrap();
        assert_eq!(a, new_page(4096, 0), "emptied node is pristine");
    }

    #[test]
    fn compaction_layout_matches_sequential_fill() {
        let mut a = new_page(4096, 0);
        let mut b = new_page(4096, 0);
        for k in 0..30u8 {
            insert(&mut a, k as usize, &[k], &[k; 9]);
        }
        for k in (0..30u8).rev() {
            insert(&mut b, 0, &[k], &[k; 9]);
        }
        assert_ne!(a, b);
        let snap = b.clone();
        compact(&mut b); // no garbage: no-op
        assert_eq!(b, snap);
        rebuild(&mut b, None);
        assert_eq!(a, b);
    }
}
