//! Splitting a multi-statement COM_QUERY (`CLIENT_MULTI_STATEMENTS`).
//!
//! The SQL layer executes one statement per call, so when a client has
//! enabled multi-statements the server cuts the text at top-level `;`s:
//! not inside `'...'`, `"..."` or `` `...` `` (with backslash escapes and
//! doubled quotes), nor inside `-- `, `#` or `/* */` comments. Empty
//! pieces are dropped; a text with a single statement is passed unchanged
//! (a trailing `;` included).
//!
//! [`hex_binary_literals`] rewrites a statement text that is not UTF-8
//! because string literals carry raw binary bytes (what PyMySQL and other
//! text-protocol drivers send for `bytes` parameters, and what MySQL
//! accepts): each such literal becomes the equivalent hex literal.

/// The statements of `sql`, in order.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() {
                    if b[i] == b'\\' && q != b'`' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q {
                        if i + 1 < b.len() && b[i + 1] == q {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'#' => i = skip_line(b, i),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                i = skip_line(b, i)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b';' => {
                pieces.push(&sql[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < sql.len() {
        pieces.push(&sql[start..]);
    }
    let pieces: Vec<&str> = pieces
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if pieces.len() <= 1 {
        return vec![sql];
    }
    pieces
}

/// `sql` with every `'...'`/`"..."` literal whose bytes are not UTF-8
/// replaced by `X'<hex>'` of its value (escapes and doubled quotes
/// decoded as MySQL does; a `_binary` introducer before it is dropped).
/// `None` when the text is still not UTF-8 (bytes outside literals) or a
/// literal is unterminated.
pub fn hex_binary_literals(sql: &[u8]) -> Option<String> {
    let b = sql;
    let mut out: Vec<u8> = Vec::with_capacity(b.len() * 2);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                let start = i;
                let mut value = Vec::new();
                i += 1;
                let mut closed = false;
                while i < b.len() {
                    let c = b[i];
                    if c == b'\\' {
                        let e = *b.get(i + 1)?;
                        match e {
                            b'0' => value.push(0),
                            b'b' => value.push(8),
                            b'n' => value.push(b'\n'),
                            b'r' => value.push(b'\r'),
                            b't' => value.push(b'\t'),
                            b'Z' => value.push(0x1A),
                            b'%' | b'_' => value.extend_from_slice(&[b'\\', e]),
                            other => value.push(other),
                        }
                        i += 2;
                        continue;
                    }
                    if c == q {
                        if b.get(i + 1) == Some(&q) {
                            value.push(q);
                            i += 2;
                            continue;
                        }
                        closed = true;
                        break;
                    }
                    value.push(c);
                    i += 1;
                }
                if !closed {
                    return None;
                }
                i += 1;
                let raw = &b[start..i];
                if std::str::from_utf8(raw).is_ok() {
                    out.extend_from_slice(raw);
                } else {
                    strip_binary_introducer(&mut out);
                    out.extend_from_slice(b"X'");
                    for v in value {
                        out.extend_from_slice(format!("{v:02X}").as_bytes());
                    }
                    out.push(b'\'');
                }
            }
            b'`' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.extend_from_slice(&b[start..i]);
            }
            b'#' => {
                let e = skip_line(b, i);
                out.extend_from_slice(&b[i..e]);
                i = e;
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                let e = skip_line(b, i);
                out.extend_from_slice(&b[i..e]);
                i = e;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut e = i + 2;
                while e < b.len() && !(b[e] == b'*' && b.get(e + 1) == Some(&b'/')) {
                    e += 1;
                }
                e = (e + 2).min(b.len());
                out.extend_from_slice(&b[i..e]);
                i = e;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Drops a trailing `_binary` introducer (and the blanks after it) from
/// `out`: `_binary X'..'` is not accepted by the parser, `X'..'` is
/// already binary.
fn strip_binary_introducer(out: &mut Vec<u8>) {
    let mut end = out.len();
    while end > 0 && out[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    const INTRO: &[u8] = b"_binary";
    if end >= INTRO.len() && out[end - INTRO.len()..end].eq_ignore_ascii_case(INTRO) {
        let before = end - INTRO.len();
        let word_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        if before == 0 || !word_char(out[before - 1]) {
            out.truncate(before);
        }
    }
}

fn skip_line(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_top_level_semicolons() {
        assert_eq!(split_statements("SELECT 1"), vec!["SELECT 1"]);
        assert_eq!(split_statements("SELECT 1;"), vec!["SELECT 1;"]);
        assert_eq!(
            split_statements("SELECT 1; SELECT 2;"),
            vec!["SELECT 1", "SELECT 2"]
        );
        assert_eq!(
            split_statements("SELECT ';', \"a;\\\"b\", `c;d`; -- x;y\nSELECT 2 /* ; */"),
            vec!["SELECT ';', \"a;\\\"b\", `c;d`", "-- x;y\nSELECT 2 /* ; */"]
        );
        assert_eq!(
            split_statements("SELECT 'it''s;'; SELECT 3 # ;"),
            vec!["SELECT 'it''s;'", "SELECT 3 # ;"]
        );
        // Unterminated constructs do not panic.
        for s in ["'abc", "/* x", "`", "a;'", "\\", "--", ";;;"] {
            let _ = split_statements(s);
        }
    }

    #[test]
    fn binary_literals_become_hex() {
        let h = |b: &[u8]| hex_binary_literals(b);
        assert_eq!(
            h(b"INSERT INTO t VALUES (1, '\xff\x00a', 'ok\xc3\xa9')").as_deref(),
            Some("INSERT INTO t VALUES (1, X'FF0061', 'ok\u{e9}')")
        );
        // Escapes, doubled quotes, _binary, double quotes.
        assert_eq!(
            h(b"SELECT _binary'\x80\\0\\'''x', \"\x81\"\"\", _binary 'a'").as_deref(),
            Some("SELECT X'8000272778', X'8122', _binary 'a'")
        );
        assert_eq!(h(b"SELECT '\x80\\%'").as_deref(), Some("SELECT X'805C25'"));
        // Outside literals, or unterminated: no rewrite.
        assert_eq!(h(b"SELECT \xff"), None);
        assert_eq!(h(b"SELECT 1 -- \xff"), None);
        assert_eq!(h(b"SELECT '\xff"), None);
        assert_eq!(h(b"SELECT '\\"), None);
        for s in [&b"'"[..], b"\"", b"`", b"/*", b"_binary", b"'\\"] {
            let _ = h(s);
        }
    }
}
