//! # collation_dump: quire's collation weights, without a server
//!
//! `tests/differential/collations.py` compares quire's weight strings with
//! MariaDB's `WEIGHT_STRING()` for every BMP code point and a sample of
//! strings. This prints quire's side from `Collation::weight` directly, so
//! no server (and no SQL layer) is involved:
//!
//! ```text
//! cargo run -p quire-engine --example collation_dump -- <collation> <first> <last>
//!     one line per code point in first..=last (hex, surrogates skipped):
//!     "<code point hex> <weight hex>"
//! cargo run -p quire-engine --example collation_dump -- <collation> -
//!     reads lines from stdin: "<hex bytes>" prints "<weight hex>";
//!     "<hex a> <hex b>" prints Collation::cmp(a, b) as -1, 0 or 1
//!     (an empty string is written as "-")
//! ```

use std::cmp::Ordering;
use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

use quire_engine::types::Collation;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s == "-" {
        return Some(Vec::new());
    }
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn range(c: Collation, first: u32, last: u32, out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = [0u8; 4];
    for ch in (first..=last).filter_map(char::from_u32) {
        let w = c.weight_of(ch.encode_utf8(&mut buf).as_bytes());
        writeln!(out, "{:04X} {}", ch as u32, hex(&w))?;
    }
    Ok(())
}

fn lines(c: Collation, out: &mut impl Write) -> Result<(), String> {
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let fields: Vec<Vec<u8>> = line
            .split_whitespace()
            .map(|f| unhex(f).ok_or_else(|| format!("not hex: {f}")))
            .collect::<Result<_, _>>()?;
        let r = match fields.as_slice() {
            [a] => writeln!(out, "{}", hex(&c.weight_of(a))),
            [a, b] => writeln!(out, "{}", ord(c.cmp(a, b))),
            _ => return Err(format!("expected one or two hex fields: {line}")),
        };
        r.map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn ord(o: Ordering) -> i8 {
    o as i8
}

fn run(args: &[String]) -> Result<(), String> {
    let usage = "usage: collation_dump <collation> (<first hex> <last hex> | -)";
    let name = args.first().ok_or(usage)?;
    let c = Collation::by_name(name).ok_or_else(|| format!("unknown collation {name}"))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match &args[1..] {
        [dash] if dash == "-" => lines(c, &mut out)?,
        [first, last] => {
            let num = |s: &str| u32::from_str_radix(s, 16).map_err(|e| format!("{s}: {e}"));
            range(c, num(first)?, num(last)?, &mut out).map_err(|e| e.to_string())?
        }
        _ => return Err(usage.into()),
    }
    out.flush().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("collation_dump: {e}");
            ExitCode::FAILURE
        }
    }
}
