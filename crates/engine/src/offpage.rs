//! # Rows with off-page columns
//!
//! A clustered entry must fit a quarter of a page (`max_entry_bytes`:
//! 4,077 bytes at 16 KiB). When a row does not, its longest string columns
//! (VARCHAR, VARBINARY, TEXT, BLOB longer than 40 bytes, as InnoDB's
//! DYNAMIC format never moves a shorter one) go to LOB chains of their own
//! (`quire_storage::lob`), longest first, until the rest fits; the row
//! keeps a 20-byte reference per moved column. The stored body (what
//! follows the clustered value's CSN and flags, mvcc.rs) is then:
//!
//! ```text
//!   in-row:    row image (rowcodec.rs; starts with its column count >= 1)
//!   off-page:  0x00 | varint n | n × (varint column, LobRef 20 B) |
//!              row image with each moved column as an empty string
//! ```
//!
//! A row image never starts with 0x00 (a table has at least one column),
//! so the body describes itself: version chains, delete-marked copies and
//! the offline checker read the references without knowing the table.
//!
//! Ownership (lob.rs's orphan list carries it across crashes): the tree
//! value that holds a reference owns the chain. The put that stores a row
//! adopts its new chains and orphans the chains of the value it replaces,
//! in one mini-transaction; a delete-marked row keeps its body and so its
//! chains; purge reclaims a replaced version's chains once no snapshot can
//! read it and no newer version or the tree still refers to them; the
//! purge that removes a delete-marked row orphans its chains in the same
//! mini-transaction and reclaims them. Recovery reclaims every orphan.
//!
//! When: a commit writes its rows' chains *before* its commit (or
//! prepare) record (`Inner::stage_body`), so the record carries the body
//! with 20-byte references, not the values; the apply, or recovery's
//! replay, only adopts them. A long value thus costs its size in redo
//! once, and replaying it costs a few bytes, which keeps recovery inside
//! the redo log whatever the value's size. A commit that fails before its
//! record is logged frees what it staged; a crash leaves it to the orphan
//! list. Since purge may free a replaced row's chains, recovery lets only
//! a row's last writer in the log adopt (engine.rs, `LastWriters`).

use std::borrow::Cow;

use quire_storage::lob::{self, LobRef, LOB_REF_BYTES};
use quire_storage::mtr::Mtr;
use quire_storage::store::Shared;

use crate::catalog::ColumnDef;
use crate::error::{EngineError, Result};
use crate::types::rowcodec::{get_varint, put_varint};
use crate::types::{self, ColumnType, JsonForm, Value};

/// First byte of a body with off-page columns.
const EXTERN_MARK: u8 = 0;
/// Columns of at most this many bytes always stay in the row (InnoDB's
/// DYNAMIC rule).
const MIN_OFFPAGE_BYTES: usize = 40;

/// Whether a stored body has off-page columns.
pub fn is_extern(body: &[u8]) -> bool {
    body.first() == Some(&EXTERN_MARK)
}

/// The (column, reference) list of a body and where its row image starts.
fn parse(body: &[u8]) -> std::result::Result<(Vec<(usize, LobRef)>, usize), String> {
    if !is_extern(body) {
        return Ok((Vec::new(), 0));
    }
    let mut pos = 1;
    let n = get_varint(body, &mut pos)?;
    let mut refs = Vec::new();
    for _ in 0..n {
        let col = usize::try_from(get_varint(body, &mut pos)?).map_err(|e| e.to_string())?;
        let end = pos + LOB_REF_BYTES;
        let r = body
            .get(pos..end)
            .and_then(LobRef::decode)
            .ok_or("off-page reference is truncated")?;
        refs.push((col, r));
        pos = end;
    }
    Ok((refs, pos))
}

/// The off-page references of a stored body (none for an in-row one).
pub fn refs(body: &[u8]) -> Result<Vec<LobRef>> {
    parse(body)
        .map(|(r, _)| r.into_iter().map(|(_, r)| r).collect())
        .map_err(EngineError::internal)
}

/// The references in a clustered tree's value, for the offline checker
/// (`quire_storage::check::check_datadir_with`): only clustered trees
/// (`t<id>.0`) hold row bodies.
pub fn refs_in_tree_value(tree: &str, v: &[u8]) -> Vec<LobRef> {
    let clustered = tree
        .strip_prefix('t')
        .and_then(|r| r.strip_suffix(".0"))
        .is_some_and(|id| id.parse::<u32>().is_ok());
    if !clustered {
        return Vec::new();
    }
    match crate::mvcc::split_value(v) {
        Some((_, _, body)) => refs(body).unwrap_or_default(),
        None => Vec::new(),
    }
}

/// The offline checker with the engine's knowledge of row bodies.
pub fn check_datadir(
    vfs: &std::sync::Arc<dyn quire_io::Vfs>,
    datadir: &std::path::Path,
) -> quire_storage::Result<quire_storage::check::CheckReport> {
    quire_storage::check::check_datadir_with(vfs, datadir, &refs_in_tree_value)
}

/// Whether a column may go off-page.
fn movable(ty: &ColumnType) -> bool {
    matches!(
        ty,
        ColumnType::Varchar { .. }
            | ColumnType::VarBinary { .. }
            | ColumnType::Text { .. }
            | ColumnType::Blob { .. }
            | ColumnType::Json
    )
}

fn varint_len(x: u64) -> usize {
    let mut b = Vec::with_capacity(10);
    put_varint(x, &mut b);
    b.len()
}

/// Which columns of a row (its encoded `image` and `values`) to move so
/// that the body takes at most `limit` bytes: None when it fits in-row;
/// Err(smallest body size) when even moving every movable column is not
/// enough.
pub fn plan(
    image_len: usize,
    values: &[Value],
    types: &[ColumnType],
    limit: usize,
) -> Result<std::result::Result<Option<Vec<usize>>, usize>> {
    if image_len <= limit {
        return Ok(Ok(None));
    }
    Ok(plan_stored(
        image_len,
        &stored_values(values, types)?,
        types,
        limit,
    ))
}

/// The values as a row image holds them: a JSON column's document in its
/// binary form (types/jsonb.rs), so that sizes and chains are the stored
/// bytes; other columns as they are.
fn stored_values<'v>(values: &'v [Value], types: &[ColumnType]) -> Result<Cow<'v, [Value]>> {
    if !types.contains(&ColumnType::Json) {
        return Ok(Cow::Borrowed(values));
    }
    let mut out = values.to_vec();
    for (v, ty) in out.iter_mut().zip(types) {
        if let (ColumnType::Json, Value::Bytes(b)) = (ty, &*v) {
            if !b.is_empty() {
                let stored = types::jsonb::stored_form(b).map_err(EngineError::internal)?;
                *v = Value::Bytes(stored.into_owned());
            }
        }
    }
    Ok(Cow::Owned(out))
}

/// [`plan`] over values in their stored form.
fn plan_stored(
    image_len: usize,
    values: &[Value],
    types: &[ColumnType],
    limit: usize,
) -> std::result::Result<Option<Vec<usize>>, usize> {
    if image_len <= limit {
        return Ok(None);
    }
    let mut cands: Vec<(usize, usize)> = values
        .iter()
        .zip(types)
        .enumerate()
        .filter_map(|(i, (v, ty))| match v {
            Value::Bytes(b) if movable(ty) && b.len() > MIN_OFFPAGE_BYTES => Some((i, b.len())),
            _ => None,
        })
        .collect();
    cands.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut size = image_len + 1 + 1; // mark + count (grows below)
    let mut moved = Vec::new();
    for (i, len) in cands {
        if size <= limit {
            break;
        }
        // The payload (varint length + bytes) becomes an empty string.
        size = size - varint_len(len as u64) - len + 1;
        size += varint_len(i as u64) + LOB_REF_BYTES;
        moved.push(i);
        size += varint_len(moved.len() as u64) - varint_len(moved.len() as u64 - 1);
    }
    if size > limit {
        return Err(size);
    }
    moved.sort_unstable();
    Ok(Some(moved))
}

/// The (column, reference) pairs of a stored body (none when in-row).
pub fn column_refs(body: &[u8]) -> Result<Vec<(usize, LobRef)>> {
    parse(body).map(|(r, _)| r).map_err(EngineError::internal)
}

/// Writes the `moved` columns to new chains (on the orphan list until the
/// caller's put adopts them) and returns the body, the new references and
/// the references of `old` (the replaced row's) kept because the column's
/// value did not change: an UPDATE of other columns rewrites no chain.
pub fn externalize(
    sh: &Shared,
    values: &[Value],
    types: &[ColumnType],
    moved: &[usize],
    old: &[(usize, LobRef)],
) -> Result<Stored> {
    externalize_stored(sh, &stored_values(values, types)?, types, moved, old)
}

/// [`externalize`] over values in their stored form.
fn externalize_stored(
    sh: &Shared,
    values: &[Value],
    types: &[ColumnType],
    moved: &[usize],
    old: &[(usize, LobRef)],
) -> Result<Stored> {
    let mut body = vec![EXTERN_MARK];
    put_varint(moved.len() as u64, &mut body);
    let mut rest: Vec<Value> = values.to_vec();
    let mut out = Stored::default();
    for &c in moved {
        let Value::Bytes(b) = &values[c] else {
            return Err(EngineError::internal(format!("column {c} is not a string")));
        };
        let r = match same_value(sh, old, c, b)? {
            Some(r) => {
                out.kept.push(r);
                r
            }
            None => {
                let r = lob::write(sh, b)?;
                out.new.push(r);
                r
            }
        };
        put_varint(c as u64, &mut body);
        r.encode(&mut body);
        rest[c] = Value::Bytes(Vec::new());
    }
    types::try_encode_row(&rest, types, &mut body).map_err(EngineError::internal)?;
    out.body = body;
    Ok(out)
}

/// The old row's chain of column `c` when it holds exactly `b`: length
/// and checksum first, then the bytes.
fn same_value(sh: &Shared, old: &[(usize, LobRef)], c: usize, b: &[u8]) -> Result<Option<LobRef>> {
    let Some(&(_, r)) = old.iter().find(|(oc, _)| *oc == c) else {
        return Ok(None);
    };
    if r.len != b.len() as u64 || r.crc != crc32c::crc32c(b) {
        return Ok(None);
    }
    Ok((lob::read(sh, &r)? == b).then_some(r))
}

/// A row body ready to store and what its put does to chain ownership.
#[derive(Debug, Default)]
pub struct Stored {
    pub body: Vec<u8>,
    /// Chains written for it: adopted by the put.
    pub new: Vec<LobRef>,
    /// Chains of the replaced row it keeps: not orphaned by the put.
    pub kept: Vec<LobRef>,
}

/// Decodes a stored body with a table's `columns`; off-page columns are
/// read only when wanted. A row stored before columns were added
/// instantly (alter.rs) has fewer: those get the value each was added
/// with. A row with more (written after an instant ADD COLUMN, read
/// through a definition taken before it) gives its first columns.
pub fn decode(
    sh: &Shared,
    body: &[u8],
    columns: &[ColumnDef],
    wanted: Option<&[bool]>,
) -> Result<Vec<Value>> {
    decode_as(sh, body, columns, wanted, JsonForm::Printed)
}

/// [`decode`] giving JSON columns in the form `json` (rowcodec.rs).
pub fn decode_as(
    sh: &Shared,
    body: &[u8],
    columns: &[ColumnDef],
    wanted: Option<&[bool]>,
    json: JsonForm,
) -> Result<Vec<Value>> {
    let (refs, start) = if is_extern(body) {
        parse(body).map_err(EngineError::internal)?
    } else {
        (Vec::new(), 0)
    };
    let row = &body[start..];
    let stored = types::rowcodec::row_column_count(row).map_err(EngineError::internal)?;
    let mut values = if stored >= columns.len() {
        let tys = columns.iter().map(|c| &c.ty);
        types::decode_row_prefix_as(row, tys, wanted, json).map_err(EngineError::internal)?
    } else {
        let tys = columns[..stored].iter().map(|c| &c.ty);
        let mut v =
            types::decode_row_typed_as(row, tys, wanted, json).map_err(EngineError::internal)?;
        for c in &columns[stored..] {
            v.push(c.instant.clone().ok_or_else(|| {
                EngineError::internal(format!(
                    "a row has {stored} columns and column '{}' was not added instantly",
                    c.name
                ))
            })?);
        }
        v
    };
    for (c, r) in refs {
        let unread = c >= columns.len() && stored > columns.len();
        if unread || wanted.is_some_and(|w| !w.get(c).copied().unwrap_or(true)) {
            continue;
        }
        let slot = values
            .get_mut(c)
            .ok_or_else(|| EngineError::internal(format!("off-page column {c} out of range")))?;
        let stored = lob::read(sh, &r)?;
        *slot = match columns.get(c).map(|col| &col.ty) {
            Some(ColumnType::Json) if json == JsonForm::Printed => {
                Value::Bytes(types::jsonb::stored_text(&stored).map_err(EngineError::internal)?)
            }
            _ => Value::Bytes(stored),
        };
    }
    Ok(values)
}

/// The plain row image of a stored body (what a commit record holds).
pub fn plain_image<'b>(
    sh: &Shared,
    body: &'b [u8],
    columns: &[ColumnDef],
) -> Result<Cow<'b, [u8]>> {
    if !is_extern(body) {
        return Ok(Cow::Borrowed(body));
    }
    let values = decode(sh, body, columns, None)?;
    let types: Vec<ColumnType> = columns.iter().map(|c| c.ty.clone()).collect();
    let mut out = Vec::new();
    types::try_encode_row(&values, &types, &mut out).map_err(EngineError::internal)?;
    Ok(Cow::Owned(out))
}

/// The body to store for a row whose encoded `image` exceeds `limit`:
/// None when it fits in-row after all, else its longest columns off-page
/// (see [`externalize`]; `old`: the replaced row's references).
pub fn store_body(
    sh: &Shared,
    image: &[u8],
    values: &[Value],
    types: &[ColumnType],
    limit: usize,
    old: &[(usize, LobRef)],
) -> Result<Option<Stored>> {
    let values = stored_values(values, types)?;
    match plan_stored(image.len(), &values, types, limit) {
        Ok(None) => Ok(None),
        Ok(Some(moved)) => externalize_stored(sh, &values, types, &moved, old).map(Some),
        Err(min) => Err(EngineError::internal(format!(
            "a row of {min} bytes after moving columns off-page passed the size check"
        ))),
    }
}

/// The mini-transaction part of storing a row: adopt `new`, orphan `old`.
pub fn swap_owner(mtr: &mut Mtr<'_>, new: &[LobRef], old: &[LobRef]) -> quire_storage::Result<()> {
    for r in new {
        lob::adopt(mtr, r)?;
    }
    for r in old {
        lob::orphan(mtr, r)?;
    }
    Ok(())
}

/// Frees chains nothing refers to any more (each must be an orphan).
pub fn reclaim_all(sh: &Shared, refs: &[LobRef]) -> Result<()> {
    for r in refs {
        lob::reclaim(sh, r)?;
    }
    Ok(())
}
