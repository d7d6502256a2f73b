//! Splitting a multi-statement COM_QUERY (`CLIENT_MULTI_STATEMENTS`).
//!
//! The SQL layer executes one statement per call, so when a client has
//! enabled multi-statements the server cuts the text at top-level `;`s:
//! not inside `'...'`, `"..."` or `` `...` `` (with backslash escapes and
//! doubled quotes), nor inside `-- `, `#` or `/* */` comments. Empty
//! pieces are dropped; a text with a single statement is passed unchanged
//! (a trailing `;` included).

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
}
