//! `my.cnf` files, read as MySQL reads them.
//!
//! ```text
//! # comment            ; comment (at the start of a line)
//! [mysqld]             section headers; only [mysqld] and [server] apply
//! innodb_buffer_pool_size = 256M     # trailing comment
//! innodb-flush-method=O_DIRECT       - or _, any case
//! datadir = "/data/my db"            quotes ('...' or "...") are removed
//! innodb_use_fdatasync               a bare name: ON (booleans only)
//! skip-innodb-adaptive-flushing      skip-/disable-/enable- for booleans
//! loose-innodb_some_future_option=1  ignored if unknown
//! !include other.cnf                 another file
//! !includedir conf.d                 every *.cnf in a directory, by name
//! ```
//!
//! As in MySQL, backslash escapes (`\n`, `\t`, `\r`, `\b`, `\s` for a
//! space, `\\`, `\'`, `\"`) are decoded in values, and a `#` starts a
//! comment unless it is inside quotes. Unlike MySQL, a relative
//! `!include`/`!includedir` path is taken relative to the directory of
//! the file that names it (MySQL uses the current directory), and a
//! missing included file is an error (MySQL skips it silently). Unknown
//! variables in the sections that apply are errors, with file and line.

use std::fs;
use std::path::{Path, PathBuf};

use crate::args::{option_value, resolve, Loader, Resolved};
use crate::registry::normalize_name;
use crate::ConfigError;

/// Sections whose options apply to quire, as `mysqld` reads both.
const SECTIONS: [&str; 2] = ["mysqld", "server"];

/// How deep `!include` may nest (this catches include loops).
const MAX_INCLUDE_DEPTH: usize = 10;

/// Applies the options of `path` (and the files it includes) to `loader`.
pub(crate) fn load(path: &Path, loader: &mut Loader) -> Result<(), ConfigError> {
    load_at(path, loader, 0)
}

fn load_at(path: &Path, loader: &mut Loader, depth: usize) -> Result<(), ConfigError> {
    let text = fs::read_to_string(path).map_err(|error| ConfigError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let dir = path.parent().unwrap_or_else(|| Path::new(""));
    // None until the first section header; then whether it applies.
    let mut applies: Option<bool> = None;

    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let syntax = |message: String| ConfigError::Syntax {
            file: path.to_path_buf(),
            line: line_no,
            message,
        };
        let in_file = |error: ConfigError| ConfigError::InFile {
            file: path.to_path_buf(),
            line: line_no,
            error: Box::new(error),
        };

        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }

        if let Some(directive) = line.strip_prefix('!') {
            let (word, arg) = directive
                .split_once(char::is_whitespace)
                .unwrap_or((directive, ""));
            let arg = arg.trim();
            if word != "include" && word != "includedir" {
                return Err(syntax(format!(
                    "unknown directive '!{word}' (expected !include or !includedir)"
                )));
            }
            if arg.is_empty() {
                return Err(syntax(format!("!{word} needs a path")));
            }
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(syntax(format!(
                    "includes nested more than {MAX_INCLUDE_DEPTH} deep (an include loop?)"
                )));
            }
            let target = dir.join(arg);
            if word == "include" {
                load_at(&target, loader, depth + 1)?;
            } else {
                for file in cnf_files_in(&target)? {
                    load_at(&file, loader, depth + 1)?;
                }
            }
            continue;
        }

        if let Some(header) = line.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                return Err(syntax("section header without a closing ']'".to_string()));
            };
            let name = header[..end].trim().to_ascii_lowercase();
            if name.is_empty() {
                return Err(syntax("empty section name '[]'".to_string()));
            }
            applies = Some(SECTIONS.contains(&name.as_str()));
            continue;
        }

        match applies {
            None => {
                return Err(syntax(
                    "option before any [section] header (put it under [mysqld])".to_string(),
                ))
            }
            Some(false) => continue,
            Some(true) => {}
        }

        let option = remove_end_comment(line).trim_end();
        let (key, value) = match option.split_once('=') {
            Some((k, v)) => (k.trim(), Some(unescape(unquote(v.trim())))),
            None => (option, None),
        };
        if key.is_empty() {
            return Err(syntax("missing variable name before '='".to_string()));
        }
        let norm = normalize_name(key);
        match resolve(&norm) {
            Resolved::Var { info, switch } => {
                let value = option_value(info, switch, value.as_deref(), key)
                    .map_err(in_file)?
                    .ok_or_else(|| {
                        in_file(ConfigError::BadOption {
                            option: key.to_string(),
                            message: format!("requires a value ({} = ...)", info.name),
                        })
                    })?;
                loader.apply(info, &value).map_err(in_file)?;
            }
            Resolved::Ignored => {}
            Resolved::Unknown(name) => {
                return Err(in_file(ConfigError::UnknownVariable { name }));
            }
            Resolved::Foreign => {
                return Err(in_file(ConfigError::UnknownVariable { name: norm }));
            }
        }
    }
    Ok(())
}

/// The `*.cnf` files of `dir`, sorted by name.
fn cnf_files_in(dir: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let io = |error| ConfigError::Io {
        path: dir.to_path_buf(),
        error,
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "cnf") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Cuts a `#` comment that is not inside quotes (MySQL's
/// `remove_end_comment`).
fn remove_end_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if (c == '\'' || c == '"') && !escaped {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && c == '#' {
            return &line[..i];
        }
        escaped = quote.is_some() && c == '\\' && !escaped;
    }
    line
}

/// Removes one pair of matching surrounding quotes.
fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// Decodes MySQL's escapes; an unknown escape is kept as written.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('s') => out.push(' '),
            Some(c @ ('\\' | '\'' | '"')) => out.push(c),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_comments_respect_quotes() {
        assert_eq!(remove_end_comment("a = 1 # c"), "a = 1 ");
        assert_eq!(remove_end_comment("a = '1 # not' # c"), "a = '1 # not' ");
        assert_eq!(remove_end_comment("a = \"x\\\"#y\" #c"), "a = \"x\\\"#y\" ");
        assert_eq!(
            remove_end_comment("a = 1 ; not a comment"),
            "a = 1 ; not a comment"
        );
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(unquote("\"a b\""), "a b");
        assert_eq!(unquote("'a b'"), "a b");
        assert_eq!(unquote("'a b\""), "'a b\"");
        assert_eq!(unquote("\""), "\"");
        assert_eq!(unescape(r"a\sb\\c\'d\x"), "a b\\c'd\\x");
    }
}
