//! # ENUM and SET members
//!
//! An ENUM column holds one of its members, a SET column any subset of
//! them. Both are stored as numbers, as InnoDB stores them, and shown as
//! text:
//!
//! ```text
//!   ENUM('b','a','c')   'a'      → ordinal 2 (1-based, declaration order)
//!   SET('x','y','z')    'z,x'    → mask 0b101 → shown 'x,z' (declaration order)
//! ```
//!
//! The canonical [`Value`](super::Value) of both is the text (`Bytes`), so
//! comparisons, functions and the protocol see strings; the number is
//! what rows and index keys store (an index on an ENUM is in ordinal
//! order, as MySQL's `ORDER BY` of an ENUM column is). A member matches
//! its text exactly or ASCII-case-insensitively (the default collation
//! is case-insensitive); a number is taken as the ordinal or mask itself.

use std::sync::Arc;

/// The member list of an ENUM or SET, in declaration order.
pub type Members = Arc<[String]>;

/// Most members an ENUM may have.
pub const MAX_ENUM_MEMBERS: usize = 65_535;
/// Most members a SET may have (one bit each in 64).
pub const MAX_SET_MEMBERS: usize = 64;
/// Longest member, in characters.
pub const MAX_MEMBER_CHARS: usize = 255;

fn same(a: &str, b: &str) -> bool {
    a == b || a.eq_ignore_ascii_case(b)
}

/// The 1-based ordinal of `text` among `members`.
pub fn enum_ordinal(members: &[String], text: &str) -> Option<u16> {
    let text = text.trim_end_matches(' ');
    let i = members
        .iter()
        .position(|m| m == text)
        .or_else(|| members.iter().position(|m| same(m, text)))?;
    u16::try_from(i + 1).ok()
}

/// The member at a 1-based ordinal.
pub fn enum_member(members: &[String], ordinal: u64) -> Option<&str> {
    let i = usize::try_from(ordinal).ok()?.checked_sub(1)?;
    members.get(i).map(String::as_str)
}

/// The mask of a comma-separated member list; `None` if a part is no
/// member. The empty string is the empty set.
pub fn set_mask(members: &[String], text: &str) -> Option<u64> {
    if text.is_empty() {
        return Some(0);
    }
    let mut mask = 0u64;
    for part in text.split(',') {
        if part.is_empty() {
            continue;
        }
        let part = part.trim_end_matches(' ');
        let i = members
            .iter()
            .position(|m| m == part)
            .or_else(|| members.iter().position(|m| same(m, part)))?;
        mask |= 1u64 << i;
    }
    Some(mask)
}

/// Whether `mask` names only members (bits below the member count).
pub fn set_mask_fits(members: &[String], mask: u64) -> bool {
    members.len() >= 64 || mask >> members.len() == 0
}

/// The members of `mask`, in declaration order, joined by commas.
pub fn set_text(members: &[String], mask: u64) -> String {
    let mut out = String::new();
    for (i, m) in members.iter().enumerate().take(64) {
        if mask & (1u64 << i) != 0 {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str(m);
        }
    }
    out
}

/// `'a','b''c'` as SHOW CREATE TABLE lists members.
pub fn quoted_list(members: &[String]) -> String {
    members
        .iter()
        .map(|m| format!("'{}'", m.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

/// Appends the catalog form: member count (u32 LE), then each member as
/// length (u32 LE) and UTF-8 bytes.
pub(crate) fn encode_members(members: &[String], out: &mut Vec<u8>) {
    out.extend_from_slice(&(members.len() as u32).to_le_bytes());
    for m in members {
        out.extend_from_slice(&(m.len() as u32).to_le_bytes());
        out.extend_from_slice(m.as_bytes());
    }
}

/// Reads [`encode_members`]' form, advancing `buf`.
pub(crate) fn decode_members(buf: &mut &[u8]) -> Result<Members, String> {
    let count = take_u32(buf)? as usize;
    if count > MAX_ENUM_MEMBERS {
        return Err(format!("{count} members"));
    }
    let mut members = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = take_u32(buf)? as usize;
        if len > buf.len() {
            return Err("member list is truncated".to_string());
        }
        let (text, rest) = buf.split_at(len);
        *buf = rest;
        members
            .push(String::from_utf8(text.to_vec()).map_err(|_| "member is not UTF-8".to_string())?);
    }
    Ok(members.into())
}

fn take_u32(buf: &mut &[u8]) -> Result<u32, String> {
    if buf.len() < 4 {
        return Err("member list is truncated".to_string());
    }
    let (head, rest) = buf.split_at(4);
    *buf = rest;
    let mut raw = [0u8; 4];
    raw.copy_from_slice(head);
    Ok(u32::from_le_bytes(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(list: &[&str]) -> Members {
        list.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into()
    }

    #[test]
    fn enum_lookup() {
        let e = m(&["b", "a", "c"]);
        assert_eq!(enum_ordinal(&e, "a"), Some(2));
        assert_eq!(enum_ordinal(&e, "A"), Some(2));
        assert_eq!(enum_ordinal(&e, "a  "), Some(2));
        assert_eq!(enum_ordinal(&e, "d"), None);
        assert_eq!(enum_ordinal(&e, ""), None);
        assert_eq!(enum_member(&e, 3), Some("c"));
        assert_eq!(enum_member(&e, 0), None);
        assert_eq!(enum_member(&e, 4), None);
    }

    #[test]
    fn set_lookup() {
        let s = m(&["x", "y", "z"]);
        assert_eq!(set_mask(&s, "z,x"), Some(0b101));
        assert_eq!(set_text(&s, 0b101), "x,z");
        assert_eq!(set_mask(&s, ""), Some(0));
        assert_eq!(set_mask(&s, "x,w"), None);
        assert!(set_mask_fits(&s, 7));
        assert!(!set_mask_fits(&s, 8));
        assert_eq!(quoted_list(&m(&["it's", "b"])), "'it''s','b'");
    }

    #[test]
    fn catalog_round_trip() {
        let s = m(&["", "a,b", "ü"]);
        let mut out = Vec::new();
        encode_members(&s, &mut out);
        let mut buf: &[u8] = &out;
        assert_eq!(decode_members(&mut buf).unwrap(), s);
        assert!(buf.is_empty());
        let mut short: &[u8] = &out[..out.len() - 1];
        assert!(decode_members(&mut short).is_err());
    }
}
